package rpc

import "github.com/kin-dev/kin/agent/sandbox"

// CommandSandbox is the sandbox the tools of a server with these options
// use (kin serve's and kin acp's).
func (o Options) CommandSandbox() *sandbox.Sandbox {
	if o.Sandbox != nil {
		return o.Sandbox
	}
	return sandbox.Default()
}

func sandboxInfo(st sandbox.Status, probed bool) SandboxInfo {
	return SandboxInfo{Mode: string(st.Mode), Mechanism: st.Mechanism, Confined: st.Confined, Reason: st.Reason, Hint: st.Hint, Probing: !probed}
}

// sandboxNotices says at start, once per connection, what a person must
// know about the sandbox: a settings problem, and that commands run
// unconfined (or not at all) when they do. Never silent.
func (s *Server) sandboxNotices() {
	st := s.opts.CommandSandbox().Status()
	if st.Problem != "" {
		s.notify(NotifyNotice, Notice{Level: "warning", Message: "sandbox settings: " + st.Problem, Source: "sandbox"})
	}
	if st.Confined {
		if st.Note != "" {
			// confined with a gap (abstract unix sockets not scoped): said
			// once, not on every approval
			s.notify(NotifyNotice, Notice{Level: "info", Message: st.Summary(), Source: "sandbox"})
		}
		return
	}
	level := "warning"
	switch {
	case st.Refuses():
		level = "error"
	case st.Mode == sandbox.ModeOff:
		level = "info" // the person's own choice; still said
	}
	s.notify(NotifyNotice, Notice{Level: level, Message: st.Summary(), Source: "sandbox"})
}
