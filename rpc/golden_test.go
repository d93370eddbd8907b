package rpc_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestGoldenExchange locks the JSON shapes the editor shims rely on: every
// result and notification of a scripted session, with ids, times and paths
// replaced by placeholders. Run with -update after a deliberate change, and
// update PROTOCOL.md with it.
func TestGoldenExchange(t *testing.T) {
	e := newEnv(t)
	e.Write("a.txt", "one\n")
	e.Model.Script(
		modeltest.Reply{Text: []string{"Let me look."}, Calls: []modeltest.Call{{ID: "call_read", Name: "read_file", Arguments: `{"path":"a.txt"}`}}, Usage: modeltest.Usage{Input: 10, Output: 5}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_write", Name: "write_file", Arguments: `{"path":"a.txt","content":"two\n"}`}}, Usage: modeltest.Usage{Input: 20, Output: 5}},
		modeltest.Reply{Text: []string{"Done", "."}, Usage: modeltest.Usage{Input: 30, Output: 2}},
	)
	ed, sid := e.editor()
	answerApprovals(ed, func(map[string]any) string { return "allow_always" })
	var results []any
	record := func(method string, params any) {
		var raw json.RawMessage
		ed.MustCall(method, params, &raw)
		results = append(results, map[string]any{"method": method, "result": raw})
	}
	tid := start(t, ed, sid, "change a.txt to two")
	completed(ed, tid)
	record("session/list", nil)
	record("session/resume", rpc.SessionIDParams{SessionID: sid})
	record("session/resume", rpc.SessionResumeParams{SessionID: sid, Limit: 2})
	record("grants/list", nil)
	code, msg := ed.CallErr("turn/start", rpc.TurnStartParams{SessionID: "s_missing", Input: "x"})
	results = append(results, map[string]any{"method": "turn/start", "error": map[string]any{"code": code, "message": msg}})

	var notes []any
	for _, n := range ed.Raw() {
		notes = append(notes, map[string]any{"method": n.Method, "params": n.Params})
	}
	check(t, "notifications.json", normalize(t, e, notes))
	check(t, "results.json", normalize(t, e, results))
}

var volatile = regexp.MustCompile(`"(sessionId|turnId|createdAt|updatedAt|created|time|id|cursor)": "[^"]*"`)

func normalize(t *testing.T, e *env, v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(b), e.WS, "/WS")
	s = volatile.ReplaceAllString(s, `"$1": "<$1>"`)
	return append([]byte(s), '\n')
}

func check(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./rpc -run Golden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s changed; if deliberate, run go test ./rpc -run Golden -update and update PROTOCOL.md.\ngot:\n%s", name, got)
	}
}
