package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// The built binary over real stdio: words steered into a streaming turn
// reach the next request; a turn that edited two files is rolled back
// (both put back, the turn gone from what the model sees); a fork at the
// first turn then diverges from the original.
func TestBinarySteerRollbackFork(t *testing.T) {
	m := modeltest.New()
	defer m.Close()
	hold := make(chan struct{})
	m.Script(
		modeltest.Reply{Text: []string{"Looking", " around"}, Calls: []modeltest.Call{{ID: "c1", Name: "list_dir", Arguments: "{}"}}, Hold: hold},
		modeltest.Reply{Text: []string{"steered answer"}},
		modeltest.Reply{Calls: []modeltest.Call{
			{ID: "w1", Name: "write_file", Arguments: `{"path":"a.txt","content":"a2\n"}`},
			{ID: "w2", Name: "write_file", Arguments: `{"path":"b.txt","content":"b2\n"}`},
		}},
		modeltest.Reply{Text: []string{"edited"}},
		modeltest.Reply{Text: []string{"fork answer"}},
		modeltest.Reply{Text: []string{"original answer"}},
	)
	p := startServe(t, "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+m.URL())
	ws := p.dir
	a, b := filepath.Join(ws, "a.txt"), filepath.Join(ws, "b.txt")
	for path, text := range map[string]string{a: "a1\n", b: "b1\n"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p.send(req(1, "initialize", map[string]any{"workspaceFolders": []any{map[string]any{"uri": "file://" + ws, "name": "ws"}}}))
	p.until(idIs(1))
	p.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	p.send(req(2, "session/new", map[string]any{"mode": "auto-edit"}))
	sid := result(t, p.until(idIs(2)))["session"].(map[string]any)["sessionId"].(string)

	// Steer while the first answer streams.
	p.send(req(3, "turn/start", map[string]any{"sessionId": sid, "input": "look around"}))
	t1 := result(t, p.until(idIs(3)))["turnId"].(string)
	p.until(method("turn/delta"))
	p.send(req(4, "turn/steer", map[string]any{"sessionId": sid, "turnId": t1, "input": "and count the files"}))
	if r := result(t, p.until(idIs(4))); r["queued"] != true {
		t.Fatalf("steer: %v", r)
	}
	close(hold)
	steered := p.until(method("turn/steered"))
	if steered["params"].(map[string]any)["input"] != "and count the files" {
		t.Errorf("turn/steered %v", steered)
	}
	p.until(method("turn/completed"))
	reqs := m.Requests()
	if len(reqs) != 2 || !strings.Contains(reqs[1].LastUserText(), "and count the files") {
		t.Fatalf("the request after the steer does not carry the words (%d requests)", len(reqs))
	}
	p.send(req(5, "turn/steer", map[string]any{"sessionId": sid, "turnId": t1, "input": "late"}))
	if e, _ := p.until(idIs(5))["error"].(map[string]any); e == nil || e["code"] != float64(-32016) {
		t.Errorf("steer of an ended turn: %v", e)
	}

	// A turn that edits two files (auto-edit: no approval), rolled back.
	p.send(req(6, "turn/start", map[string]any{"sessionId": sid, "input": "edit both"}))
	t2 := result(t, p.until(idIs(6)))["turnId"].(string)
	p.until(method("turn/completed"))
	if got, _ := os.ReadFile(a); string(got) != "a2\n" {
		t.Fatalf("a.txt after the turn: %q", got)
	}
	p.send(req(7, "turn/rollback", map[string]any{"sessionId": sid, "turns": 1}))
	rb := result(t, p.until(idIs(7)))
	undos := rb["undos"].([]any)
	if rb["turns"].([]any)[0] != t2 || len(undos) != 1 || len(undos[0].(map[string]any)["restored"].([]any)) != 2 {
		t.Errorf("rollback %v", rb)
	}
	for path, want := range map[string]string{a: "a1\n", b: "b1\n"} {
		if got, _ := os.ReadFile(path); string(got) != want {
			t.Errorf("%s after the rollback: %q", filepath.Base(path), got)
		}
	}

	// Fork at the first turn, then each goes its own way.
	p.send(req(8, "session/fork", map[string]any{"sessionId": sid, "turnId": t1}))
	fork := result(t, p.until(idIs(8)))
	fid := fork["session"].(map[string]any)["sessionId"].(string)
	if fid == sid || fork["session"].(map[string]any)["mode"] != "auto-edit" {
		t.Fatalf("fork %v", fork)
	}
	p.send(req(9, "turn/start", map[string]any{"sessionId": fid, "input": "fork: go left"}))
	p.until(idIs(9))
	p.until(method("turn/completed"))
	p.send(req(10, "turn/start", map[string]any{"sessionId": sid, "input": "original: go right"}))
	p.until(idIs(10))
	p.until(method("turn/completed"))
	reqs = m.Requests()
	fr, or := reqs[len(reqs)-2].Text(), reqs[len(reqs)-1].Text()
	if !strings.Contains(fr, "look around") || !strings.Contains(fr, "and count the files") || strings.Contains(fr, "original: go right") {
		t.Errorf("the fork's request: %s", fr)
	}
	if strings.Contains(or, "fork: go left") || strings.Contains(or, "edit both") || !strings.Contains(or, "look around") {
		t.Errorf("the original's request: %s", or)
	}
}
