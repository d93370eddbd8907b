package rpc_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// hidden lists characters that must never reach an approval raw: bidi
// overrides and isolates, zero-width characters, control characters.
var hidden = []string{"\u202e", "\u202d", "\u2066", "\u200b", "\u200f", "\ufeff", "\x1b", "\r"}

// An approval shows bidi and zero-width characters escaped in every field
// (title, command, path, diff), so "invoice_\u202egpj.exe" cannot pass for
// "invoice_exe.jpg"; what runs and what is written are the exact bytes
// the call proposed.
func TestApprovalsEscapeHiddenCharacters(t *testing.T) {
	e := newEnv(t)
	spoofed := "invoice_\u202egpj.exe"
	content := "total\u200b: 42\x1b[2K\n"
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_bash", Name: "bash", Arguments: args(map[string]any{"command": "printf ok > '" + spoofed + "'"})}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_write", Name: "write_file", Arguments: args(map[string]any{"path": spoofed + ".txt", "content": content})}}},
		modeltest.Reply{Text: []string{"done"}},
	)
	ed, sid := e.editor()
	answerApprovals(ed, func(map[string]any) string { return "allow_once" })
	tid := start(t, ed, sid, "make the invoice")
	if done := completed(ed, tid); done["status"] != "completed" {
		t.Fatalf("turn %v", done)
	}
	for _, n := range ed.Raw() {
		if n.Method != "approval/request" {
			continue
		}
		var req map[string]any
		if err := json.Unmarshal(n.Params, &req); err != nil {
			t.Fatal(err)
		}
		for _, h := range hidden {
			if strings.Contains(jsonText(req), h) {
				t.Errorf("approval %v carries %q raw", req["callId"], h)
			}
		}
	}
	bash := ed.Wait("approval/request", rpctest.Field("callId", "c_bash"))
	if want := `printf ok > 'invoice_\u202egpj.exe'`; bash["command"] != want {
		t.Errorf("command shown as %q, want %q", bash["command"], want)
	}
	write := ed.Wait("approval/request", rpctest.Field("callId", "c_write"))
	d := write["diffs"].([]any)[0].(map[string]any)
	if !strings.HasSuffix(d["path"].(string), `invoice_\u202egpj.exe.txt`) || d["newText"] != `total\u200b: 42\x1b[2K`+"\n" ||
		!strings.Contains(d["unified"].(string), `+total\u200b: 42\x1b[2K`) || !strings.Contains(write["title"].(string), `\u202e`) {
		t.Errorf("write approval %v", write)
	}
	// What ran and what was written are the raw bytes.
	if b, err := os.ReadFile(e.WS + "/" + spoofed); err != nil || string(b) != "ok" {
		t.Errorf("the command's file: %q %v", b, err)
	}
	if b, err := os.ReadFile(e.WS + "/" + spoofed + ".txt"); err != nil || string(b) != content {
		t.Errorf("written %q (%v), want %q", b, err, content)
	}
}

// jsonText is every string of a decoded JSON value, joined.
func jsonText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var b strings.Builder
		for _, x := range v {
			b.WriteString(jsonText(x) + "\n")
		}
		return b.String()
	case map[string]any:
		var b strings.Builder
		for _, x := range v {
			b.WriteString(jsonText(x) + "\n")
		}
		return b.String()
	}
	return ""
}
