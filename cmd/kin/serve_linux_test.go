package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
)

// An editor that vanishes mid-stream (its end of kin's stdout closed) is an
// editor leaving, as a closed stdin is: kin does not die of SIGPIPE but
// tears down: the running command's process group is killed and the turn's
// end is in the session log.
func TestBinaryTearsDownWhenTheEditorStopsReading(t *testing.T) {
	p, home, sid, turnID, pgid := tickingForever(t)
	p.stdout.Close() // the editor is gone; kin's next tick notification breaks
	if code := p.wait(); code != 0 {
		t.Errorf("kin exited with %d (%s), want 0 after tearing down", code, p.cmd.ProcessState)
	}
	if alive := groupMembers(pgid); len(alive) > 0 {
		t.Errorf("the command's process group survived kin: %v", alive)
	}
	if !hasTurnEnd(t, filepath.Join(home, "sessions", sid+".jsonl"), turnID) {
		t.Error("the session log has no end record for the turn")
	}
}

// tickingForever is kin serve running a turn whose unconfined command
// ticks until it is killed: the process, its KIN_HOME, the session and
// turn, and the command's process group (killed when the test ends).
func tickingForever(t *testing.T) (p *proc, home, sid, turnID string, pgid int) {
	m := modeltest.New()
	t.Cleanup(m.Close)
	m.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash",
		Arguments: `{"command":"echo $$ > group.pid; while :; do echo tick; sleep 0.05; done"}`}}})
	// Unconfined, so the pid the command prints is the host's (a confined
	// command's PID namespace would die with it anyway).
	home = t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(`{"sandbox": "off"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p = startServe(t, "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+m.URL(), "KIN_HOME="+home, "HOME="+home)
	p.send(req(1, "initialize", map[string]any{}))
	p.until(idIs(1))
	p.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	p.send(req(2, "session/new", nil))
	sid = p.until(idIs(2))["result"].(map[string]any)["session"].(map[string]any)["sessionId"].(string)
	p.send(req(3, "turn/start", map[string]any{"sessionId": sid, "input": "tick forever"}))
	ap := p.until(func(m map[string]any) bool { return m["method"] == "approval/request" })
	p.send(req(4, "approval/respond", map[string]any{"requestId": ap["params"].(map[string]any)["requestId"], "decision": "allow_once"}))
	turnID = ap["params"].(map[string]any)["turnId"].(string)
	p.until(func(m map[string]any) bool {
		params, _ := m["params"].(map[string]any)
		delta, _ := params["outputDelta"].(string)
		return m["method"] == "turn/toolCall" && strings.Contains(delta, "tick")
	})
	b, err := os.ReadFile(filepath.Join(p.cmd.Dir, "group.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pgid, err = strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || len(groupMembers(pgid)) == 0 {
		t.Fatalf("no running process group %q", b)
	}
	t.Cleanup(func() { syscall.Kill(-pgid, syscall.SIGKILL) })

	return p, home, sid, turnID, pgid
}

// groupMembers lists the live (not zombie) processes of a process group.
func groupMembers(pgid int) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(st, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(st[i+1:])) // state ppid pgrp ...
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			out = append(out, e.Name())
		}
	}
	return out
}

func hasTurnEnd(t *testing.T, path, turnID string) bool {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct {
			Type   string `json:"type"`
			TurnID string `json:"turnId"`
		}
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Type == "turn" && r.TurnID == turnID {
			return true
		}
	}
	return false
}

// A client of kin acp that stops reading is a client leaving too: the next
// write fails with EPIPE and kin exits on its own, never of SIGPIPE.
func TestBinaryACPExitsWhenTheClientStopsReading(t *testing.T) {
	p := startACP(t)
	p.send(req(1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}))
	p.until(idIs(1))
	p.stdout.Close()
	p.send(req(2, "session/new", map[string]any{"cwd": p.dir, "mcpServers": []any{}}))
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("kin acp did not exit once its client stopped reading")
	}
	if ws := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
		t.Fatalf("kin acp died of %v, want an exit", ws.Signal())
	}
}

// kin handles SIGPIPE beside its start, not before it (handleSignals): an
// editor gone before kin's first answer must still find kin exiting on
// its own, never killed by SIGPIPE, for serve and acp alike. On one
// processor, so the goroutine answering and the one setting up the
// signals take turns; whether the answer waited for the setup is a race
// the test cannot force, but without SIGPIPE handled at all it fails.
func TestBinaryAnEditorGoneBeforeTheFirstAnswerIsNoSIGPIPE(t *testing.T) {
	for _, sub := range []string{"serve", "acp"} {
		for i := 0; i < 3; i++ {
			p := startKin(t, sub, "GOMAXPROCS=1")
			p.stdout.Close() // before kin can have written anything
			if sub == "serve" {
				p.send(req(1, "initialize", map[string]any{}))
			} else {
				(&acpProc{p}).send(req(1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}))
			}
			p.wait()
			if ws := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
				t.Fatalf("kin %s died of %v, want an exit", sub, ws.Signal())
			}
		}
	}
}

// SIGTERM (and SIGINT alike) is the end of kin serve, with the teardown a
// closed stdin gets: the running command's process group is killed, the
// turn's end is on record and kin exits 0. SIGHUP is the same end: an
// editor in a terminal (Neovim's vim.system) starts kin in its own process
// group, so closing the terminal window sends kin the hangup too; its
// default action killed kin on the spot, and the command it was running
// (unconfined, so no --die-with-parent) and every process below kin went
// on without it.
func TestBinarySignalsTearDown(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			p, home, sid, turnID, pgid := tickingForever(t)
			// the editor keeps reading: what kin sends while it tears down arrives
			go io.Copy(io.Discard, p.out)

			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := p.wait(); code != 0 {
				t.Errorf("kin exited with %d (%s), want 0 after tearing down", code, p.cmd.ProcessState)
			}
			if alive := groupMembers(pgid); len(alive) > 0 {
				t.Errorf("the command's process group survived kin: %v", alive)
			}
			if !hasTurnEnd(t, filepath.Join(home, "sessions", sid+".jsonl"), turnID) {
				t.Error("the session log has no end record for the turn")
			}
		})
	}
}
