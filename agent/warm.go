package agent

import (
	"strings"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/sandbox"
)

// warmCommands looks at a session's workspace, in the background, the way
// its first confined command will (boundary.Workspace.Protect): the walk
// keeps what it found per folder (boundary's walk cache), so that command
// then costs one lstat per folder instead of reading every entry (about
// 10 ms in a repository of 2,000 files, 80 in one of 20,000, 0.4 s in one
// of 100,000). A person opens a session seconds before a model asks for
// a command, so the walk is done by then. Once per set of roots and
// process: later changes are the cache's to notice. Nothing is decided
// here: every command still walks, and reuses only folders whose stamps
// did not change.
//
// Only when commands are confined: a kin that runs them unconfined (the
// sandbox off, or no bubblewrap) never walks for them. kin serve and kin
// acp probe the sandbox right after initialize, and an editor may open a
// session before that probe ended: the walk then waits for it.
func (s *Service) warmCommands(ws *boundary.Workspace) {
	if ws == nil {
		return
	}
	sb := s.opts.Sandbox
	if sb == nil {
		sb = sandbox.Default()
	}
	st, probed := sb.Expected()
	if !st.Confined {
		return
	}
	roots := ws.Roots()
	if _, done := s.warmed.LoadOrStore(strings.Join(roots, "\x00"), true); done {
		return
	}
	go func() {
		if !probed && !sb.Status().Confined {
			return
		}
		ws.Protect(sb.Extra(roots))
	}()
}
