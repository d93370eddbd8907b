package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/manager"
)

// mcpShow is kin mcp show NAME [--accept HASH]: the entry (as kin mcp get)
// and, for a trusted server, its instructions as it gives them now. To read
// them kin connects to the server, and only to a trusted one (which any kin
// would start without asking); an untrusted server is not started: approve
// it in an editor or kin chat first. With --accept, changed instructions
// whose hash is HASH (the one shown) are accepted: pinned in the server's
// trust grant, and sent to the model from then on.
func mcpShow(wd, home, name, accept string, stdout, stderr io.Writer) int {
	if rc := mcpGet(wd, home, name, stdout, stderr); rc != 0 {
		return rc
	}
	cfg, err := config.Load(wd, home)
	if err != nil {
		fmt.Fprintf(stderr, "kin mcp show: %v\n", err)
		return 1
	}
	sc, ok := cfg.Server(name)
	if !ok || !sc.Connectable() {
		fmt.Fprintln(stdout, "instructions: (not read: the server is not loaded or is disabled)")
		return 0
	}
	h := &showHost{stderr: stderr}
	// In the command sandbox, as kin serve starts it: the person trusted
	// the launch its approval described (confined, writing only its state
	// folder and what its "sandbox" field adds; not started at all where
	// settings.json requires a sandbox there is none of). Without one the
	// manager runs a stdio server unconfined.
	sb := sandbox.New(sandbox.FromSettings(home))
	m := manager.New(manager.Options{Workdir: wd, KinHome: home, Host: h, Version: version, Fixed: []config.Server{sc}, Sandbox: sb})
	defer m.Close()
	m.Start(context.Background())
	var row manager.Row
	for _, r := range m.List().Servers {
		if r.Name == name {
			row = r
		}
	}
	switch {
	case h.asked:
		fmt.Fprintln(stdout, "instructions: (not read: the server is not trusted; kin starts it only once you approve it in an editor or kin chat)")
		return 0
	case row.State != manager.StateConnected:
		// the error is the server's own text, often (a JSON-RPC error's
		// message): oneLine, as the notices (showHost.Notice)
		fmt.Fprintf(stdout, "instructions: (not read: %s %s)\n", row.State, oneLine(row.LastError))
		return 0
	case row.Instructions == "":
		fmt.Fprintln(stdout, "instructions: (none)")
		return 0
	}
	status := "accepted: sent to the model, framed as the server's untrusted text"
	if row.InstructionsPending {
		status = "CHANGED since you trusted it: withheld from the model until you accept them (kin mcp show " + sc.Display().Name + " --accept " + row.InstructionsHash + ")"
	}
	fmt.Fprintf(stdout, "instructions: %s\nhash:         %s\n\n%s\n", status, row.InstructionsHash, indent(row.Instructions))
	if accept == "" {
		return 0
	}
	if err := m.AcceptInstructions(name, accept); err != nil {
		fmt.Fprintf(stderr, "kin mcp show: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "\naccepted: the model gets these instructions from the next request on")
	return 0
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

// showHost denies every launch approval (recording that one was asked),
// and asks the person nothing.
type showHost struct {
	stderr io.Writer
	asked  bool
}

func (h *showHost) ApproveLaunch(context.Context, manager.LaunchRequest) (string, error) {
	h.asked = true
	return manager.DecisionDeny, nil
}
func (h *showHost) Elicit(context.Context, manager.ElicitRequest) (manager.ElicitResult, error) {
	return manager.ElicitResult{Action: "decline"}, nil
}
func (h *showHost) Status(manager.Status) {}
func (h *showHost) Notice(level, msg string) {
	if level != manager.LevelInfo {
		// a notice quotes what the server answered (an error's message,
		// its tools' names): kin chat and the editors filter it, a
		// terminal would run its escape sequences
		fmt.Fprintln(h.stderr, oneLine(msg))
	}
}
func (h *showHost) RevokeGrant(string, string) bool { return false }
