package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/sandbox"
)

// confinedRounds measures what confining a command costs at the protocol
// level: a turn whose model calls bash with `true` and then answers, through
// kin serve over stdio, once in a kin whose sandbox is off and once in one
// whose commands run under bubblewrap, in a workspace like a real
// repository (protectTree: kin walks the workspace before every confined
// command to find what to protect, a walk an empty workspace hides).
//
// The round trip is from sending turn/start to reading turn/completed, the
// same for both: two requests to the local model, the approval gate, the
// command and its tool result in between. Both kins were granted `true`
// for the session by a first turn (allow_always), so no measured turn
// waits for the editor. Rounds alternate which kin goes first, and the
// added cost is the median of each round's difference.
func confinedRounds(t *table, tmp string, kins []bin, m *modeltest.Server, rounds int) {
	const skipped = "bash `true` turn: skipped"
	if st := sandbox.New(sandbox.FromSettings(filepath.Join(tmp, "probe-home"))).Status(); !st.Confined {
		fmt.Printf("%s, commands cannot be confined here (%s)\n", skipped, st.Reason)
		return
	}
	ws := filepath.Join(tmp, "repo")
	if err := protectTree(ws, 200, 10); err != nil {
		fmt.Printf("%s, no workspace (%v)\n", skipped, err)
		return
	}
	type side struct {
		who, name string
		confined  bool
		p         *proc
		sid       string
	}
	var sides []*side
	for _, b := range kins {
		pair := []*side{{who: b.name, name: "unconfined"}, {who: b.name, name: "confined", confined: true}}
		ok := true
		for _, s := range pair {
			home, _ := os.MkdirTemp(tmp, "home-")
			if !s.confined {
				if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(`{"sandbox":"off"}`), 0o600); err != nil {
					fmt.Printf("%s (%v)\n", skipped, err)
					return
				}
			}
			p, err := start(b.path, home, m.URL())
			if err != nil {
				fmt.Printf("%s for %s (%v)\n", skipped, b.name, err)
				ok = false
				break
			}
			defer p.close()
			p.call("initialize", map[string]any{})
			p.notify("initialized", map[string]any{})
			s.p, s.sid = p, p.newSession(map[string]any{"cwd": ws})
			// The first turn grants `true` for the session and builds
			// what later turns reuse (the sandbox's probe among them).
			if _, err := s.p.bashTurn(m, s.sid, true, s.confined); err != nil {
				fmt.Printf("%s for %s, %s: %v\n", skipped, b.name, s.name, err)
				ok = false
				break
			}
		}
		if ok {
			sides = append(sides, pair...)
		}
	}
	for r := range rounds {
		took := map[string]float64{}
		for i := range sides {
			s := sides[(i+r)%len(sides)]
			d, err := s.p.bashTurn(m, s.sid, false, s.confined)
			if err != nil {
				fmt.Printf("bash `true` turn, %s %s, round %d: %v\n", s.who, s.name, r, err)
				return
			}
			took[s.who+" "+s.name] = ms(d)
			t.add(fmt.Sprintf("bash `true` turn, %s (ms)", s.name), s.who, ms(d))
		}
		for _, b := range kins {
			if c, ok := took[b.name+" confined"]; ok {
				t.add("  confined minus unconfined (ms)", b.name, c-took[b.name+" unconfined"])
			}
		}
	}
	firstRounds(t, tmp, kins, m, rounds, ws)
}

// bashTurn runs one turn whose model calls bash with `true`, answering
// approvals with their allow_always option when answer is set (a measured turn that is
// asked is an error: it would time the editor), and checks the call ran
// confined or not as expected.
func (p *proc) bashTurn(m *modeltest.Server, sid string, answer, confined bool) (time.Duration, error) {
	m.Script(
		modeltest.Reply{Calls: []modeltest.Call{{Name: "bash", Arguments: `{"command":"true"}`}}},
		modeltest.Reply{Text: []string{"done"}},
	)
	// A kin that hangs ends the measurement rather than the run.
	stuck := time.AfterFunc(time.Minute, func() { p.cmd.Process.Kill() })
	defer stuck.Stop()
	at := time.Now()
	p.send("turn/start", map[string]any{"sessionId": sid, "input": "run true"})
	var call *toolCall
	for {
		f := p.frame()
		if f == nil {
			return 0, fmt.Errorf("kin serve ended or hung")
		}
		var n struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		json.Unmarshal(f, &n)
		switch n.Method {
		case "approval/request":
			if !answer {
				return 0, fmt.Errorf("asked for approval in a measured turn")
			}
			var req struct {
				RequestID string `json:"requestId"`
				Options   []struct{ OptionID, Kind string }
			}
			json.Unmarshal(n.Params, &req)
			for _, o := range req.Options {
				if o.Kind == "allow_always" {
					p.send("approval/respond", map[string]any{"requestId": req.RequestID, "decision": o.OptionID})
					break
				}
			}
		case "turn/toolCall":
			var c toolCall
			if json.Unmarshal(n.Params, &c) == nil && (c.Status == "completed" || c.Status == "failed" || c.Status == "denied") {
				call = &c
			}
		case "turn/completed":
			d := time.Since(at)
			switch {
			case call == nil:
				return 0, fmt.Errorf("turn completed without the bash call ending")
			case call.Status != "completed":
				return 0, fmt.Errorf("bash call %s: %s", call.Status, call.Output)
			case call.Sandbox.Confined != confined:
				return 0, fmt.Errorf("bash call ran with confined=%v", call.Sandbox.Confined)
			}
			return d, nil
		}
	}
}

// toolCall is what bashTurn reads of turn/toolCall.
type toolCall struct {
	Status  string `json:"status"`
	Output  any    `json:"output"`
	Sandbox struct {
		Confined bool `json:"confined"`
	} `json:"sandbox"`
}

// protectTree makes a repository-like workspace: folders folders of files
// files each (nested two deep, as source trees are), a few top files, and a
// git repository with them committed. No AGENTS.md: kin would ask to trust
// it, and its absence costs a placeholder, as in most repositories.
func protectTree(ws string, folders, files int) error {
	for d := range folders {
		dir := filepath.Join(ws, fmt.Sprintf("pkg%02d", d/10), fmt.Sprintf("sub%d", d%10))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for f := range files {
			body := fmt.Sprintf("package sub%d\n\n// file %d of folder %d\n", d%10, f, d)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%d.go", f)), []byte(body), 0o644); err != nil {
				return err
			}
		}
	}
	for name, body := range map[string]string{"README.md": "# repo\n", "Makefile": "all:\n\ttrue\n", ".env.example": "KEY=\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "tree"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(string(b)))
		}
	}
	return nil
}
