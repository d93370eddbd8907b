package builtin

import (
	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/sandbox"
)

// commandPolicy is the sandbox policy of one command: the trust boundary's
// protection of the workspace (computed here, once for the command, and
// passed down to the sandbox, which only renders it) and its secrets
// hidden; the roots, sandboxWritable and the workspace's cache writable.
func commandPolicy(sb *sandbox.Sandbox, ws *boundary.Workspace, network bool) (sandbox.Policy, boundary.Protection) {
	roots := ws.Roots()
	prot := ws.Protect(sb.Extra(roots))
	return sb.For(roots, network, prot, ws.Secrets().Hidden()), prot
}
