package sandbox

import "os/exec"

// starter is a mechanism that starts its commands itself (bubblewrap: on
// the thread whose Landlock domain scopes them, scope_linux.go).
type starter interface {
	start(cmd *exec.Cmd) error
}

// noter is a mechanism that confines with a gap worth saying (Status.Note).
type noter interface {
	note() string
}

// Start starts cmd, a command Command or CommandContext returned, the way
// its mechanism needs: on Linux, in the Landlock domain that keeps the
// host's abstract unix sockets out of its reach where the probe found it
// works. Start an unconfined command with cmd.Start, never with this.
func (s *Sandbox) Start(cmd *exec.Cmd) error {
	s.probe()
	if st, ok := s.mech.(starter); ok {
		return st.start(cmd)
	}
	return cmd.Start()
}
