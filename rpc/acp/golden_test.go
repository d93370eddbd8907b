package acp

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/agent/modeltest"
)

var update = flag.Bool("update", false, "rewrite the golden frames")

// TestGoldenFrames records every frame of a scripted ACP session from the
// real server (a turn with a read, an edit and a command, then the
// settings, a plan, kin's own question, commands, the model and its
// effort, a thought, an image and the continue question: see goldenPeer)
// (one file per method, and per update kind for session/update), validates each against the SDK's schema (strictly), and
// compares them with testdata/golden. Run with -update after a deliberate
// change and review the diff.
func TestGoldenFrames(t *testing.T) {
	acpSchema(t)
	w := newWorld(t)
	w.write("a.txt", "one\n")
	// The continue question comes soon; a second model to switch to.
	w.settings(`{"maxToolCallsPerTurn":3,"models":[{"id":"gpt-5.1","contextWindow":128000,"efforts":["low","medium","high"]},
		{"id":"gpt-5.1-mini","name":"GPT-5.1 mini","contextWindow":64000,"images":false}]}`)
	c := w.connect(nil)
	c.initialize(map[string]any{
		"fs":          map[string]any{"readTextFile": true, "writeTextFile": true},
		"auth":        map[string]any{"terminal": true},
		"elicitation": map[string]any{"form": map[string]any{}},
		"session":     map[string]any{"notices": map[string]any{}, "compaction": map[string]any{}},
	})
	c.on(MethodReadTextFile, func(p json.RawMessage) (any, error) {
		var r ReadTextFileRequest
		_ = json.Unmarshal(p, &r)
		b, err := os.ReadFile(r.Path)
		if err != nil {
			return nil, &jsonrpc2.Error{Code: CodeResourceNotFound, Message: "no such file"}
		}
		return ReadTextFileResponse{Content: string(b)}, nil
	})
	c.on(MethodWriteTextFile, func(p json.RawMessage) (any, error) {
		var r WriteTextFileRequest
		_ = json.Unmarshal(p, &r)
		return struct{}{}, os.WriteFile(r.Path, []byte(r.Content), 0o644)
	})
	c.answer("allow_once")
	c.call(MethodAuthenticate, AuthenticateRequest{MethodID: AuthMethodLogin}, nil)

	// Usage is scripted: the mock's own estimate counts the request's
	// bytes, which hold temporary paths (usage_update frames).
	w.model.Script(
		modeltest.Reply{Text: []string{"Let me ", "look."}, Calls: []modeltest.Call{{ID: "call_read", Name: "read_file", Arguments: `{"path":"a.txt"}`}}, Usage: modeltest.Usage{Input: 3400, Output: 20}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_write", Name: "edit_file", Arguments: `{"path":"a.txt","old_string":"one","new_string":"two"}`}}, Usage: modeltest.Usage{Input: 3450, Output: 30}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_sh", Name: "bash", Arguments: `{"command":"echo out"}`}}, Usage: modeltest.Usage{Input: 3520, Output: 12}},
		modeltest.Reply{Text: []string{"Done."}, Usage: modeltest.Usage{Input: 3560, Output: 3}},
	)
	sid := c.newSession()
	if res := c.prompt(sid, text("change a.txt to two, please, and tell me when you are done with it"), map[string]any{"type": "resource", "resource": map[string]any{"uri": "file://" + w.ws + "/notes.md", "mimeType": "text/markdown", "text": "notes\n"}}); res.StopReason != StopEndTurn {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	var list ListSessionsResponse
	c.call(MethodSessionList, ListSessionsRequest{Cwd: w.ws}, &list)
	c.call(MethodSessionLoad, LoadSessionRequest{SessionID: sid, Cwd: w.ws, MCPServers: []MCPServer{}}, nil)
	c.call(MethodSessionResume, LoadSessionRequest{SessionID: sid, Cwd: w.ws, MCPServers: []MCPServer{}}, nil)
	_ = c.tryCall(MethodSessionSetMode, SetModeRequest{SessionID: sid, ModeID: "nope"}, nil)
	_ = c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "audio", "data": "AA==", "mimeType": "audio/wav"}}}, nil)
	_ = c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": "s_missing", "prompt": []any{text("x")}}, nil)
	goldenPeer(t, w, c, sid)
	c.call(MethodSessionFork, ForkSessionRequest{SessionID: sid, Cwd: w.ws, MCPServers: []MCPServer{}}, nil)
	c.notify(NotifySessionCancel, SessionIDRequest{SessionID: sid})
	c.call(MethodSessionClose, SessionIDRequest{SessionID: sid}, nil)
	c.call(MethodSessionDelete, SessionIDRequest{SessionID: sid}, nil)
	c.call(MethodLogout, map[string]any{}, nil)

	c.mu.Lock()
	frames := settled(append([]frame(nil), c.frames...))
	c.mu.Unlock()
	byFile := map[string][]frame{}
	for _, f := range frames {
		if f.Dir == "client" && f.Kind == "response" && f.Method == MethodReadTextFile {
			continue // the fake client's answers are not kin's shapes
		}
		checkFrame(t, f)
		name := strings.NewReplacer("/", "_", "$", "").Replace(f.Method)
		if f.Method == NotifySessionUpdate {
			var n struct {
				Update struct {
					Kind string `json:"sessionUpdate"`
				} `json:"update"`
			}
			_ = json.Unmarshal(f.Params, &n)
			name += "." + n.Update.Kind
		}
		// A few of each are enough to pin the shape; a prompt ends in
		// more ways than that (a refusal, a command, the call limit).
		keep := 6
		if f.Method == MethodSessionPrompt {
			keep = 16
		}
		if len(byFile[name]) < keep {
			byFile[name] = append(byFile[name], f)
		}
	}
	var names []string
	for n := range byFile {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		checkGolden(t, n+".json", normalize(t, w, byFile[n]))
	}
}

var volatile = regexp.MustCompile(`"(sessionId|updatedAt|requestId|turnId|runningTurnId|compactionId)": "[^"]*"`)

func normalize(t *testing.T, w *world, v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(out.String(), w.ws, "/WS")
	s = strings.ReplaceAll(s, w.home, "/HOME")
	s = volatile.ReplaceAllString(s, `"$1": "<$1>"`)
	s = regexp.MustCompile(`s_\d{8}T\d{6}_[0-9a-f]+`).ReplaceAllString(s, "<sessionId>")
	return append([]byte(s), '\n')
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./rpc/acp -run Golden -update)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the golden file (run go test ./rpc/acp -run Golden -update and review the diff):\n%s", name, got)
	}
}

// goldenPeer works like a peer (issue 15) in ACP's terms: the mode set
// both ways, a plan and kin's own question (a form, answered), /plan and
// /mode run as commands, the continue question at the call limit answered
// no (max_turn_requests), an unknown setting refused, and the session
// loaded again so that the plan and the modes replay.
func goldenPeer(t *testing.T, w *world, c *client, sid string) {
	c.call(MethodSessionSetMode, SetModeRequest{SessionID: sid, ModeID: "auto-edit"}, nil)
	c.call(MethodSessionSetConfig, map[string]any{"sessionId": sid, "configId": "mode", "value": "agent"}, nil)
	_ = c.tryCall(MethodSessionSetConfig, map[string]any{"sessionId": sid, "configId": "nope", "value": "x"}, nil)

	c.on(MethodElicitationCreate, func(json.RawMessage) (any, error) {
		return CreateElicitationResponse{Action: "accept", Content: map[string]any{"q1": "sqlite", "q2": "the tests run offline"}}, nil
	})
	plan := `{"entries":[{"content":"read the failing test","status":"completed"},{"content":"fix the race in the cache","status":"in_progress","priority":"high"},{"content":"run the tests","status":"pending","priority":"low"}]}`
	w.model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_plan", Name: "update_plan", Arguments: plan}}, Usage: modeltest.Usage{Input: 3600, Output: 40}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_ask", Name: "ask", Arguments: `{"questions":[{"question":"Which database should the tests use?","options":["postgres","sqlite"]},{"question":"Anything else I should know?"}]}`}}, Usage: modeltest.Usage{Input: 3700, Output: 50}},
		modeltest.Reply{Text: []string{"Planned."}},
	)
	if res := c.prompt(sid, text("plan the fix")); res.StopReason != StopEndTurn {
		t.Fatalf("the planning prompt: %q", res.StopReason)
	}
	c.prompt(sid, text("/plan"))
	c.prompt(sid, text("/mode ask"))

	// The model and its effort; reasoning as thought chunks; an image.
	c.call(MethodSessionSetConfig, map[string]any{"sessionId": sid, "configId": "thought_level", "value": "high"}, nil)
	w.model.Script(modeltest.Reply{Reasoning: []modeltest.Reasoning{{Summary: []string{"A diagram ", "of boxes."}}}, Text: []string{"A diagram."},
		Usage: modeltest.Usage{Input: 3800, Output: 60}})
	c.prompt(sid, text("what is this?"), map[string]any{"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="})
	c.call(MethodSessionSetConfig, map[string]any{"sessionId": sid, "configId": "model", "value": "gpt-5.1-mini"}, nil)
	_ = c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}}}, nil)
	c.prompt(sid, text("/model gpt-5.1"))
	c.call(MethodSessionSetModel, SetModelRequest{SessionID: sid, ModelID: "gpt-5.1"}, nil)

	// /compact: a compaction_update as it starts and with the summary.
	w.model.Script(modeltest.Reply{Text: []string{"## Goal\nChange a.txt."}})
	c.prompt(sid, text("/compact"))

	// At the call limit (3, see settings) kin asks to go on; no.
	c.on(MethodRequestPermission, func(p json.RawMessage) (any, error) {
		var r RequestPermissionRequest
		_ = json.Unmarshal(p, &r)
		choice := "allow_once"
		if r.Meta["kin"].(map[string]any)["kind"] == "continue" {
			choice = "deny"
		}
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": choice}}, nil
	})
	var replies []modeltest.Reply
	for i := range 4 {
		replies = append(replies, modeltest.Reply{Calls: []modeltest.Call{{ID: fmt.Sprintf("call_l%d", i), Name: "list_dir", Arguments: "{}"}}})
	}
	w.model.Script(replies...)
	if res := c.prompt(sid, text("look around")); res.StopReason != StopMaxTurnRequests {
		t.Fatalf("the prompt past the call limit: %q", res.StopReason)
	}
	c.call(MethodSessionLoad, LoadSessionRequest{SessionID: sid, Cwd: w.ws, MCPServers: []MCPServer{}}, nil)
}

// settled is the frames as if every streamed piece had waited: adjacent
// text chunks of one message joined, a running call's output update
// replaced by the next one of its call, as kin acp's outbox does to what
// waits (merge.go). How much waited depends on when the test read, so the
// golden files pin the settled frames; each shape is the same either way.
// (The client's frames are decoded and encoded again, so merge.go's byte
// matching cannot be used here.)
func settled(frames []frame) []frame {
	var out []frame
	last := -1 // out's last frame kin sent
	for _, f := range frames {
		if last >= 0 {
			key, text, replace, ok := streamOf(f)
			pkey, ptext, _, pok := streamOf(out[last])
			if ok && pok && key == pkey {
				if replace {
					out[last] = f
				} else {
					out[last].Params = withText(out[last].Params, ptext+text)
				}
				continue
			}
		}
		out = append(out, f)
		if f.Dir == "kin" {
			last = len(out) - 1
		}
	}
	return out
}

// streamOf says which stream a session/update kin sent belongs to (its
// params without the text), the chunk's text, and whether it replaces
// the one before it (a running call's output).
func streamOf(f frame) (key, text string, replace, ok bool) {
	if f.Dir != "kin" || f.Kind != "notification" || f.Method != NotifySessionUpdate {
		return "", "", false, false
	}
	var p struct {
		SessionID string         `json:"sessionId"`
		Update    map[string]any `json:"update"`
	}
	if json.Unmarshal(f.Params, &p) != nil {
		return "", "", false, false
	}
	u := p.Update
	switch u["sessionUpdate"] {
	case UpdateAgentMessage, UpdateAgentThought:
		c, _ := u["content"].(map[string]any)
		t, isText := c["text"].(string)
		if len(c) != 2 || c["type"] != "text" || !isText {
			return "", "", false, false
		}
		delete(c, "text")
		b, _ := json.Marshal(p)
		return string(b), t, false, true
	case UpdateToolCallUpdate:
		if u["status"] != StatusInProgress || u["content"] == nil {
			return "", "", false, false
		}
		for k := range u {
			switch k {
			case "sessionUpdate", "toolCallId", "status", "content", "_meta":
			default:
				return "", "", false, false
			}
		}
		meta, _ := json.Marshal(u["_meta"])
		return fmt.Sprint("output\x00", p.SessionID, "\x00", u["toolCallId"], "\x00", string(meta)), "", true, true
	}
	return "", "", false, false
}

// withText is a chunk's params with its text replaced.
func withText(params json.RawMessage, text string) json.RawMessage {
	var p map[string]any
	_ = json.Unmarshal(params, &p)
	p["update"].(map[string]any)["content"].(map[string]any)["text"] = text
	b, _ := json.Marshal(p)
	return b
}
