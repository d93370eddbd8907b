package manager

import (
	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/confine"
	"github.com/kin-dev/kin/mcp/trust"
)

// confinement is how a stdio server of this manager runs (package
// mcp/confine): in the command sandbox unless its entry says "off", or
// unconfined where there is none (or the manager was given none: tests
// and embedders that confine nothing). The zero Plan is unconfined and
// unsaid.
func (s *server) confinement(l trust.Launch) confine.Plan {
	if s.cfg.Transport != config.TransportStdio || s.m.opts.Sandbox == nil {
		return confine.Plan{}
	}
	return confine.For(confine.Env{Sandbox: s.m.opts.Sandbox, KinHome: s.m.opts.KinHome, Workspace: s.m.opts.Workdir},
		s.cfg, l.Workdir, l.Executable)
}
