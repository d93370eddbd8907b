package rpc_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// bufferEditor starts a server and an editor that keeps its buffers the
// way answer says, declaring caps, with one new session. tweak, when not
// nil, changes the server's options first.
func (e *env) bufferEditor(caps any, answer rpctest.EditAnswer, tweak func(*rpc.Options)) (*rpctest.Editor, string, rpc.InitializeResult) {
	e.t.Helper()
	opts := e.Options()
	if tweak != nil {
		tweak(&opts)
	}
	ed := rpctest.Start(e.t, opts)
	ed.KeepBuffers(answer)
	init := ed.InitializeWith(caps, e.WS)
	var res rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{}, &res)
	return ed, res.Session.SessionID, init
}

func (e *env) read(name string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.WS, name))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// final waits for a call's final turn/toolCall.
func final(ed *rpctest.Editor, callID string) map[string]any {
	return ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", callID), func(m map[string]any) bool {
		switch m["status"] {
		case "pending", "awaiting_approval", "running":
			return false
		}
		return true
	}))
}

func TestUnsavedBufferIsWhatKinReadsAndDiffsAgainst(t *testing.T) {
	e := newEnv(t)
	p := e.Write("main.go", "package main\n\nfunc main() {}\n")
	buffer := "package main\n\n// TODO: unsaved note\nfunc main() {}\n"
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_read", Name: "read_file", Arguments: args(map[string]any{"path": "main.go"})}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_search", Name: "search", Arguments: args(map[string]any{"pattern": "unsaved note"})}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_edit", Name: "edit_file", Arguments: args(map[string]any{"path": "main.go", "old_string": "func main() {}", "new_string": "func main() { run() }"})}}},
		modeltest.Reply{Text: []string{"ok"}},
	)
	ed, sid, _ := e.bufferEditor(rpctest.Capabilities(true), rpctest.ApplyEdits, nil)
	ed.OpenBuffer(p, buffer)
	answerApprovals(ed, func(map[string]any) string { return "deny" })
	completed(ed, start(t, ed, sid, "look at main.go"))

	read := final(ed, "c_read")
	out := read["output"].(string)
	if !strings.Contains(out, "     3\t// TODO: unsaved note\n") || !strings.Contains(out, "[main.go has unsaved changes in the editor: this is the editor's buffer") {
		t.Errorf("read_file did not read the buffer:\n%s", out)
	}
	if out := final(ed, "c_search")["output"].(string); !strings.Contains(out, "main.go:3: // TODO: unsaved note") {
		t.Errorf("search did not search the buffer:\n%s", out)
	}
	req := ed.Wait("approval/request", rpctest.Field("callId", "c_edit"))
	d := req["diffs"].([]any)[0].(map[string]any)
	if d["oldText"] != buffer || d["newText"] != strings.Replace(buffer, "func main() {}", "func main() { run() }", 1) {
		t.Errorf("the diff is not against the buffer: %v", d)
	}
	if u := d["unified"].(string); !strings.Contains(u, " // TODO: unsaved note\n-func main() {}\n+func main() { run() }\n") {
		t.Errorf("unified diff:\n%s", u)
	}
	if final(ed, "c_edit")["status"] != "denied" || len(ed.Requests(rpc.MethodApplyEdit)) != 0 {
		t.Error("a denied edit reached the editor")
	}
	if text, _ := ed.Buffer(p); text != buffer || e.read("main.go") != "package main\n\nfunc main() {}\n" {
		t.Error("a denied edit changed something")
	}
}

func TestApprovedEditIsAppliedInTheEditorsBuffer(t *testing.T) {
	for name, answer := range map[string]rpctest.EditAnswer{"reported before the answer": rpctest.ApplyEdits, "answered before the report": rpctest.AnswerBeforeChange} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			p := e.Write("a.txt", "a\nb\nc\n")
			e.Model.Script(
				modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "edit_file", Arguments: args(map[string]any{"path": "a.txt", "old_string": "b\n", "new_string": "B\n"})}}},
				modeltest.Reply{Calls: []modeltest.Call{{ID: "c2", Name: "edit_file", Arguments: args(map[string]any{"path": "a.txt", "old_string": "c\n", "new_string": "C\n"})}}},
				modeltest.Reply{Text: []string{"done"}},
			)
			ed, sid, init := e.bufferEditor(rpctest.Capabilities(true), answer, nil)
			if c := init.Capabilities.TextDocuments; !c.Sync || !c.ApplyEdit || c.PositionEncoding != "utf-16" {
				t.Errorf("initialize says %+v", c)
			}
			ed.OpenBuffer(p, "a\nb\nc\nunsaved\n")
			answerApprovals(ed, func(map[string]any) string { return "allow_once" })
			if done := completed(ed, start(t, ed, sid, "capitalise")); done["status"] != "completed" {
				t.Fatalf("turn %v", done)
			}
			for _, id := range []string{"c1", "c2"} {
				c := final(ed, id)
				if c["status"] != "completed" || !strings.Contains(c["output"].(string), "in the editor's buffer, not saved yet") {
					t.Errorf("%s: %v", id, c)
				}
			}
			if text, _ := ed.Buffer(p); text != "a\nB\nC\nunsaved\n" {
				t.Errorf("buffer %q", text)
			}
			if got := e.read("a.txt"); got != "a\nb\nc\n" {
				t.Errorf("the disk changed before the editor saved: %q", got)
			}
			if n := ed.Notes(rpc.NotifyDidChangeFiles); len(n) != 0 {
				t.Errorf("reload asked for an edit made in the editor: %v", n)
			}
			reqs := ed.Requests(rpc.MethodApplyEdit)
			if len(reqs) != 2 {
				t.Fatalf("%d edits sent", len(reqs))
			}
			var first, second rpc.ApplyWorkspaceEditParams
			_ = json.Unmarshal(reqs[0], &first)
			_ = json.Unmarshal(reqs[1], &second)
			dc := first.Edit.DocumentChanges[0]
			want := rpc.TextEdit{Range: rpc.Range{Start: rpc.Position{Line: 1}, End: rpc.Position{Line: 2}}, NewText: "B\n"}
			if first.Label != "Edit a.txt" || first.SessionID != sid || first.CallID != "c1" || dc.TextDocument.URI != "file://"+p ||
				dc.TextDocument.Version != 1 || len(dc.Edits) != 1 || dc.Edits[0] != want {
				t.Errorf("first edit %+v", first)
			}
			// The second edit waited for the editor's version after the first.
			if v := second.Edit.DocumentChanges[0].TextDocument.Version; v != 2 {
				t.Errorf("second edit at version %d, want 2", v)
			}
			ed.SaveBuffer(p)
			if got := e.read("a.txt"); got != "a\nB\nC\nunsaved\n" {
				t.Errorf("saved %q", got)
			}
		})
	}
}

func TestEditorWithoutBufferCapabilitiesGetsDiskWritesAndReloads(t *testing.T) {
	e := newEnv(t)
	p := e.Write("a.txt", "on disk\n")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_read", Name: "read_file", Arguments: args(map[string]any{"path": "a.txt"})}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_write", Name: "write_file", Arguments: args(map[string]any{"path": "a.txt", "content": "new\n"})}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_new", Name: "write_file", Arguments: args(map[string]any{"path": "dir/b.txt", "content": "b\n"})}}},
		modeltest.Reply{Text: []string{"done"}},
	)
	ed := rpctest.Start(t, e.Options())
	init := ed.Initialize(e.WS)
	if c := init.Capabilities.TextDocuments; c.Sync || c.ApplyEdit || c.PositionEncoding != "utf-16" {
		t.Errorf("initialize says %+v", c)
	}
	var res rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{}, &res)
	// An editor that did not declare sync is not followed.
	ed.Notify(rpc.NotifyDidOpen, rpc.DidOpenTextDocumentParams{TextDocument: rpc.TextDocumentItem{URI: "file://" + p, Version: 1, Text: "in a buffer\n"}})
	answerApprovals(ed, func(map[string]any) string { return "allow_once" })
	completed(ed, start(t, ed, res.Session.SessionID, "write"))

	if out := final(ed, "c_read")["output"].(string); !strings.Contains(out, "on disk") {
		t.Errorf("read %q", out)
	}
	if e.read("a.txt") != "new\n" || e.read("dir/b.txt") != "b\n" {
		t.Error("not written on disk")
	}
	notes := ed.Notes(rpc.NotifyDidChangeFiles)
	if len(notes) != 2 {
		t.Fatalf("reload notes %v", notes)
	}
	want := []string{`"type":"changed","uri":"file://` + p + `"`, `"type":"created","uri":"file://` + filepath.Join(e.WS, "dir", "b.txt") + `"`}
	for i, n := range notes {
		b, _ := json.Marshal(n["changes"].([]any)[0])
		if !strings.Contains(string(b), want[i]) {
			t.Errorf("reload %d: %s, want %s", i, b, want[i])
		}
	}
	if len(ed.Requests(rpc.MethodApplyEdit)) != 0 {
		t.Error("an edit was sent to an editor that did not declare applyEdit")
	}
}

func TestUnansweredEditIsUnknownAndNeverWrittenOnDisk(t *testing.T) {
	setup := func(t *testing.T, tweak func(*rpc.Options)) (*env, *rpctest.Editor, string, string, string) {
		e := newEnv(t)
		p := e.Write("a.txt", "a\n")
		e.Model.Script(
			modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "edit_file", Arguments: args(map[string]any{"path": "a.txt", "old_string": "a", "new_string": "b"})}}},
			modeltest.Reply{Text: []string{"done"}},
		)
		ed, sid, _ := e.bufferEditor(rpctest.Capabilities(true), rpctest.NeverAnswer, tweak)
		ed.OpenBuffer(p, "a\n")
		answerApprovals(ed, func(req map[string]any) string {
			if req["kind"] == "acknowledge_unknown" {
				return ""
			}
			return "allow_once"
		})
		return e, ed, sid, p, start(t, ed, sid, "edit")
	}
	check := func(t *testing.T, e *env, ed *rpctest.Editor, sid, p, why string) {
		c := final(ed, "c1")
		if c["status"] != "unknown" || !strings.Contains(c["output"].(string), why) || !strings.Contains(c["output"].(string), "Do not repeat this edit") {
			t.Errorf("call %v", c)
		}
		if e.read("a.txt") != "a\n" || len(ed.Notes(rpc.NotifyDidChangeFiles)) != 0 {
			t.Error("the edit went to disk")
		}
		if n := len(ed.Requests(rpc.MethodApplyEdit)); n != 1 {
			t.Errorf("the edit was sent %d times", n)
		}
		// The next question first asks to acknowledge it.
		e.Model.Script(modeltest.Reply{Text: []string{"next"}})
		start(t, ed, sid, "next")
		ed.Wait("approval/request", rpctest.Field("kind", "acknowledge_unknown"))
	}
	t.Run("no answer in time", func(t *testing.T) {
		e, ed, sid, p, tid := setup(t, func(o *rpc.Options) { o.ApplyEditTimeout = 200 * time.Millisecond })
		completed(ed, tid)
		check(t, e, ed, sid, p, "the editor did not answer within 200ms")
	})
	t.Run("turn cancelled while waiting", func(t *testing.T) {
		e, ed, sid, p, tid := setup(t, nil)
		ed.WaitRequest(rpc.MethodApplyEdit)
		ed.MustCall("turn/cancel", rpc.SessionIDParams{SessionID: sid}, nil)
		if done := completed(ed, tid); done["status"] != "cancelled" {
			t.Errorf("turn %v", done)
		}
		check(t, e, ed, sid, p, "the turn was cancelled while the editor was applying it")
	})
}

func TestIncrementalChangesCountUTF16(t *testing.T) {
	e := newEnv(t)
	p := filepath.Join(e.WS, "u.txt") // not on disk: only a buffer
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_read", Name: "read_file", Arguments: args(map[string]any{"path": "u.txt"})}}},
		modeltest.Reply{Text: []string{"ok"}},
	)
	ed, sid, _ := e.bufferEditor(rpctest.Capabilities(false), rpctest.ApplyEdits, nil)
	ed.OpenBuffer(p, "héllo 😀 wörld\n世界 😀😀 end\n")
	// Line 0: h é l l o ␠ are units 0-5, 😀 is 6-7 (a surrogate pair).
	ed.Type(p, rpc.Range{Start: rpc.Position{Line: 0, Character: 6}, End: rpc.Position{Line: 0, Character: 8}}, "世")
	// Line 1: 世 界 ␠ are 0-2, the first 😀 3-4, the second 5-6.
	ed.Type(p, rpc.Range{Start: rpc.Position{Line: 1, Character: 5}, End: rpc.Position{Line: 1, Character: 7}}, "x")
	// Line 0 is now "héllo 世 wörld": w ö r l d are units 8-12.
	ed.Type(p, rpc.Range{Start: rpc.Position{Line: 0, Character: 8}, End: rpc.Position{Line: 0, Character: 13}}, "world")
	// A character past the end of the line is its end (LSP).
	ed.Type(p, rpc.Range{Start: rpc.Position{Line: 1, Character: 999}, End: rpc.Position{Line: 1, Character: 999}}, "!")
	want := "héllo 世 world\n世界 😀x end!\n"
	if text, _ := ed.Buffer(p); text != want {
		t.Fatalf("the fake editor has %q", text)
	}
	completed(ed, start(t, ed, sid, "read"))
	out := final(ed, "c_read")["output"].(string)
	if !strings.Contains(out, "     1\théllo 世 world\n     2\t世界 😀x end!\n") {
		t.Errorf("kin read:\n%s", out)
	}
}

func TestBufferWithUnsavedChangesIsNeverWrittenAround(t *testing.T) {
	e := newEnv(t)
	dirty := e.Write("dirty.txt", "v1\n")
	clean := e.Write("clean.txt", "x\n")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_dirty", Name: "edit_file", Arguments: args(map[string]any{"path": "dirty.txt", "old_string": "v1", "new_string": "v2"})}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_clean", Name: "edit_file", Arguments: args(map[string]any{"path": "clean.txt", "old_string": "x", "new_string": "y"})}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_read", Name: "read_file", Arguments: args(map[string]any{"path": "clean.txt"})}}},
		modeltest.Reply{Text: []string{"done"}},
	)
	// The editor follows its buffers but cannot apply kin's edits.
	ed, sid, _ := e.bufferEditor(rpctest.Capabilities(false), rpctest.ApplyEdits, nil)
	ed.OpenBuffer(dirty, "v1\nunsaved\n")
	ed.OpenBuffer(clean, "x\n")
	answerApprovals(ed, func(map[string]any) string { return "allow_once" })
	completed(ed, start(t, ed, sid, "edit both"))

	c := final(ed, "c_dirty")
	if c["status"] != "failed" || !strings.Contains(c["output"].(string), "dirty.txt has unsaved changes in the editor, and this editor does not let kin edit its buffers: save or close the file, then ask again") {
		t.Errorf("dirty: %v", c)
	}
	for _, r := range ed.Notes("approval/request") {
		if r["callId"] == "c_dirty" {
			t.Error("the person was asked to approve a write that could not be done")
		}
	}
	if e.read("dirty.txt") != "v1\n" {
		t.Error("unsaved changes were written around")
	}
	// The clean buffer: written on disk, then the editor reloads it.
	if final(ed, "c_clean")["status"] != "completed" || e.read("clean.txt") != "y\n" {
		t.Error("the clean file was not written")
	}
	// The editor reloads in its read loop, before it read turn/completed.
	ed.Wait(rpc.NotifyDidChangeFiles, nil)
	if text, _ := ed.Buffer(clean); text != "y\n" {
		t.Errorf("the editor did not reload: %q", text)
	}
	if out := final(ed, "c_read")["output"].(string); !strings.Contains(out, "1\ty\n") || strings.Contains(out, "unsaved") {
		t.Errorf("read after the write:\n%s", out)
	}
}

// editTypedWhileAsking runs a turn whose edit_file replaces "a\n" in a.txt
// (open, "a\n"), answered as a person who types into the file while the
// card is shown: at revision 0 the buffer becomes typed; at revision 1 it
// first answers revision 0 (refused: that card was replaced) and then
// allows the card shown now. It returns the editor, the file and both cards.
func editTypedWhileAsking(t *testing.T, typed string) (*rpctest.Editor, string, map[string]any, map[string]any) {
	e := newEnv(t)
	p := e.Write("a.txt", "a\n")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "edit_file", Arguments: args(map[string]any{"path": "a.txt", "old_string": "a\n", "new_string": "b\n"})}}},
		modeltest.Reply{Text: []string{"done"}},
	)
	ed, sid, _ := e.bufferEditor(rpctest.Capabilities(true), rpctest.ApplyEdits, nil)
	ed.OpenBuffer(p, "a\n")
	cards := make(chan map[string]any, 4)
	ed.OnNote(func(n rpctest.Note) {
		if n.Method != "approval/request" {
			return
		}
		var req map[string]any
		_ = json.Unmarshal(n.Params, &req)
		cards <- req
		id := req["requestId"].(string)
		switch req["revision"] {
		case nil:
			go ed.ReplaceBuffer(p, typed)
		case float64(1):
			go func() {
				if code, msg := ed.CallErr("approval/respond", rpc.ApprovalRespondParams{RequestID: id, Decision: "allow_once"}); code != rpc.CodeInvalidParams || !strings.Contains(msg, "changed since it was shown") {
					t.Errorf("an answer to the replaced card: %d %q", code, msg)
				}
				ed.Call("approval/respond", rpc.ApprovalRespondParams{RequestID: id, Decision: "allow_once", Revision: 1}, nil)
			}()
		}
	})
	completed(ed, start(t, ed, sid, "edit"))
	first, second := <-cards, <-cards
	if second["requestId"] != first["requestId"] || second["revision"] != float64(1) {
		t.Fatalf("the replaced card %v", second)
	}
	return ed, p, first, second
}

// The person types into the file while the approval waits: kin applies
// the same replacement to the new text and replaces the card (the same
// requestId, revision 1); what is written is the diff on the card answered.
func TestBufferChangedWhileAskingRevisesTheApproval(t *testing.T) {
	ed, p, first, second := editTypedWhileAsking(t, "a\ntyped\n")
	d := second["diffs"].([]any)[0].(map[string]any)
	if d["oldText"] != "a\ntyped\n" || d["newText"] != "b\ntyped\n" || !strings.Contains(d["unified"].(string), "-a\n+b\n typed\n") {
		t.Errorf("the new diff %v", d)
	}
	if c := final(ed, "c1"); c["status"] != "completed" {
		t.Errorf("call %v", c)
	}
	if text, _ := ed.Buffer(p); text != "b\ntyped\n" {
		t.Errorf("buffer %q", text)
	}
	res := ed.Wait("approval/resolved", rpctest.Field("requestId", first["requestId"]))
	if res["decision"] != "allow_once" {
		t.Errorf("resolved %v", res)
	}
}

// When the text the change was made for is gone, the replaced card says so
// and Allow writes nothing: no stale write, no edit sent.
func TestAChangeThatNoLongerAppliesWritesNothing(t *testing.T) {
	ed, p, _, second := editTypedWhileAsking(t, "x\n")
	if !strings.HasSuffix(second["title"].(string), "(no longer applies)") ||
		!strings.Contains(second["warning"].(string), "The file changed while you were deciding, and this change no longer applies: edit_file: old_string not found in a.txt") {
		t.Errorf("the replaced card %v", second)
	}
	if c := final(ed, "c1"); c["status"] != "failed" || !strings.Contains(c["output"].(string), "not written: edit_file: old_string not found") {
		t.Errorf("call %v", c)
	}
	if len(ed.Requests(rpc.MethodApplyEdit)) != 0 {
		t.Error("an edit against a stale base was sent")
	}
	if text, _ := ed.Buffer(p); text != "x\n" {
		t.Errorf("buffer %q", text)
	}
}

func TestLostBufferIsSaidAndRefusedUntilReopened(t *testing.T) {
	e := newEnv(t)
	p := e.Write("a.txt", "disk\n")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_lost", Name: "read_file", Arguments: args(map[string]any{"path": "a.txt"})}}},
		modeltest.Reply{Text: []string{"hm"}},
	)
	ed, sid, _ := e.bufferEditor(rpctest.Capabilities(true), rpctest.ApplyEdits, nil)
	ed.OpenBuffer(p, "one line\n")
	// A change kin cannot apply: line 5 does not exist.
	ed.Notify(rpc.NotifyDidChange, rpc.DidChangeTextDocumentParams{
		TextDocument:   rpc.VersionedTextDocumentIdentifier{URI: "file://" + p, Version: 2},
		ContentChanges: []rpc.TextDocumentContentChangeEvent{{Range: &rpc.Range{Start: rpc.Position{Line: 5}, End: rpc.Position{Line: 5}}, Text: "x"}},
	})
	n := ed.Wait("notice", rpctest.Field("source", "documents"))
	if n["level"] != "warning" || !strings.Contains(n["message"].(string), "kin lost track of your buffer of "+p) || !strings.Contains(n["message"].(string), "close it and open it again") {
		t.Errorf("notice %v", n)
	}
	completed(ed, start(t, ed, sid, "read"))
	if c := final(ed, "c_lost"); c["status"] != "failed" || !strings.Contains(c["output"].(string), "kin lost track of the editor's buffer") {
		t.Errorf("read of a lost buffer: %v", c)
	}
	ed.OpenBuffer(p, "reopened\n")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_back", Name: "read_file", Arguments: args(map[string]any{"path": "a.txt"})}}},
		modeltest.Reply{Text: []string{"ok"}},
	)
	completed(ed, start(t, ed, sid, "again"))
	if out := final(ed, "c_back")["output"].(string); !strings.Contains(out, "reopened") {
		t.Errorf("after reopening: %s", out)
	}
}

func TestTraceLeavesBufferTextOut(t *testing.T) {
	e := newEnv(t)
	p := e.Write(".env", "")
	var trace lockedBuffer
	ed, _, _ := e.bufferEditor(rpctest.Capabilities(true), rpctest.ApplyEdits, func(o *rpc.Options) { o.Trace = &trace })
	ed.OpenBuffer(p, "API_TOKEN=canary-buffer-secret\n")
	ed.Type(p, rpc.Range{Start: rpc.Position{Line: 1}, End: rpc.Position{Line: 1}}, "OTHER=canary-typed-secret\n")
	ed.MustCall("session/list", nil, nil) // the notifications before it were read
	got := trace.String()
	if strings.Contains(got, "canary") {
		t.Errorf("buffer text in the trace:\n%s", got)
	}
	if !strings.Contains(got, `"text":"\u003c31 bytes\u003e"`) && !strings.Contains(got, `"text":"<31 bytes>"`) {
		t.Errorf("the trace does not say the text's size:\n%s", got)
	}
}

// goldenDocuments records, for TestGoldenFrames, the frames of the
// editor's buffers (PROTOCOL.md "Documents") as they crossed the pipe: an
// initialize declaring buffer sync, didOpen, an incremental and a full
// didChange, workspace/applyEdit with an applied and a refused answer,
// workspace/didChangeFiles, didClose, and the notice when kin loses track
// of a buffer.
func goldenDocuments(t *testing.T, g *recorder, z *normalizer) {
	e := newEnv(t)
	z.fixed = append(z.fixed, e.WS, "/home/ana/src/app", e.Home, "/home/ana/.kin")
	a := e.Write("main.go", "package main\n\nfunc main() {}\n")
	edit := func(id, old, new string) modeltest.Reply {
		return modeltest.Reply{Calls: []modeltest.Call{{ID: id, Name: "edit_file", Arguments: args(map[string]any{"path": "main.go", "old_string": old, "new_string": new})}}}
	}
	e.Model.Script(
		edit("call_edit", "func main() {}", "func main() { run() }"),
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_new", Name: "write_file", Arguments: args(map[string]any{"path": "run.go", "content": "package main\n\nfunc run() {}\n"})}}},
		modeltest.Reply{Text: []string{"done"}},
	)
	// Standing grants answer the edits: an approval answered while kin
	// sends an edit can deadlock net.Pipe until kin never writes from its
	// read loop (see NEWS: conn's work), and approvals are not this
	// section's frames.
	grants := `[{"id":"p_1_1","type":"tool","key":"tool:edit_file","label":"Always allow edit_file","scope":"permanent","created":"2026-11-30T23:15:00Z"},
		{"id":"p_1_2","type":"tool","key":"tool:write_file","label":"Always allow write_file","scope":"permanent","created":"2026-11-30T23:15:00Z"}]`
	if err := os.WriteFile(filepath.Join(e.Home, "grants.json"), []byte(grants), 0o600); err != nil {
		t.Fatal(err)
	}
	ed, sid, _ := e.bufferEditor(rpctest.Capabilities(true), rpctest.ApplyEdits, nil)
	ed.OpenBuffer(a, "package main\n\nfunc main() {}\n")
	ed.Type(a, rpc.Range{Start: rpc.Position{Line: 1, Character: 0}, End: rpc.Position{Line: 1, Character: 0}}, "// héllo 😀\n")
	completed(ed, start(t, ed, sid, "call run"))
	ed.AnswerEdits(rpctest.RefuseEdits)
	e.Model.Script(edit("call_refused", "run()", "run(1)"), modeltest.Reply{Text: []string{"refused"}})
	completed(ed, start(t, ed, sid, "again"))
	ed.ReplaceBuffer(a, "package main\n")
	ed.CloseBuffer(a)
	ed.OpenBuffer(a, "x\n")
	ed.Notify(rpc.NotifyDidChange, rpc.DidChangeTextDocumentParams{TextDocument: rpc.VersionedTextDocumentIdentifier{URI: "file://" + a, Version: 2},
		ContentChanges: []rpc.TextDocumentContentChangeEvent{{Range: &rpc.Range{Start: rpc.Position{Line: 5}, End: rpc.Position{Line: 5}}, Text: "y"}}})
	ed.Wait("notice", rpctest.Field("source", "documents"))

	// This section's frames: its methods with the editor's answers to
	// kin's requests, initialize with its capabilities, and the notice.
	g.addWire(ed.Wire(), func(method string, m map[string]any) bool {
		switch {
		case method == "initialize", strings.HasPrefix(method, "textDocument/"), method == rpc.MethodApplyEdit,
			method == rpc.NotifyDidChangeFiles:
			return true
		case method == "notice":
			p, _ := m["params"].(map[string]any)
			return p["source"] == "documents"
		}
		return false
	})
}

// goldenApprovalsAndBuffers records, for TestGoldenFrames, the approvals
// that depend on the editor's buffers: a command's, which names the open
// files whose changes it will not see (unsavedFiles), and an edit's card
// replaced in place because the person typed into the file while it
// waited (the same requestId, revision 1), with the answer to the card it
// replaced refused and the answer to the new one taken.
func goldenApprovalsAndBuffers(t *testing.T, g *recorder, z *normalizer) {
	e := newEnv(t)
	z.fixed = append(z.fixed, e.WS, "/home/ana/src/app", e.Home, "/home/ana/.kin")
	// Unconfined (the sandbox off), so the frames are the same on every machine.
	if err := os.WriteFile(filepath.Join(e.Home, "settings.json"), []byte(`{"sandbox":"off"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e.Sandbox = sandbox.New(sandbox.FromSettings(e.Home))
	a := e.Write("main.go", "package main\n\nfunc main() {}\n")
	e.Write("main_test.go", "package main\n")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_unsaved", Name: "bash", Arguments: args(map[string]any{"command": "go test ./..."})}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_revised", Name: "edit_file", Arguments: args(map[string]any{"path": "main.go", "old_string": "func main() {}", "new_string": "func main() { run() }"})}}},
		modeltest.Reply{Text: []string{"done"}},
	)
	ed, sid, _ := e.bufferEditor(rpctest.Capabilities(true), rpctest.ApplyEdits, nil)
	ed.OpenBuffer(a, "package main\n\nfunc main() {}\n")
	ed.OpenBuffer(filepath.Join(e.WS, "main_test.go"), "package main\n\n// unsaved\n")
	ed.OnNote(func(n rpctest.Note) {
		if n.Method != "approval/request" {
			return
		}
		var req map[string]any
		_ = json.Unmarshal(n.Params, &req)
		id := req["requestId"].(string)
		switch {
		case req["callId"] == "call_unsaved":
			go ed.Call("approval/respond", rpc.ApprovalRespondParams{RequestID: id, Decision: "deny"}, nil)
		case req["revision"] == nil:
			go ed.Type(a, rpc.Range{Start: rpc.Position{Line: 1}, End: rpc.Position{Line: 1}}, "// typed while kin asked\n")
		default:
			go func() {
				ed.CallErr("approval/respond", rpc.ApprovalRespondParams{RequestID: id, Decision: "allow_once"})
				ed.Call("approval/respond", rpc.ApprovalRespondParams{RequestID: id, Decision: "allow_once", Revision: 1}, nil)
			}()
		}
	})
	completed(ed, start(t, ed, sid, "test and fix"))
	if c := final(ed, "call_revised"); c["status"] != "completed" {
		t.Fatalf("the revised edit: %v", c)
	}
	// This kin numbers its requests from ap_1 like the main recording's:
	// named apart, they are normalised apart.
	wire := ed.Wire()
	for i := range wire {
		wire[i].Msg = bytes.ReplaceAll(wire[i].Msg, []byte(`"ap_`), []byte(`"ap_buf`))
	}
	g.addWire(wire, func(method string, m map[string]any) bool {
		switch method {
		case "approval/respond":
			return true
		case "approval/request":
			p, _ := m["params"].(map[string]any)
			return p["callId"] == "call_unsaved" || p["revision"] != nil
		}
		return false
	})
}

func TestBadTextDocumentsCapabilityIsInvalidParams(t *testing.T) {
	e := newEnv(t)
	ed := rpctest.Start(t, e.Options())
	code, msg := ed.CallErr("initialize", json.RawMessage(`{"capabilities":{"textDocuments":{"sync":"yes"}}}`))
	if code != rpc.CodeInvalidParams || !strings.Contains(msg, "capabilities") {
		t.Errorf("got %d %q", code, msg)
	}
	// The connection still serves: a good initialize works.
	if res := ed.InitializeWith(rpctest.Capabilities(false), e.WS); !res.Capabilities.TextDocuments.Sync {
		t.Errorf("initialize %+v", res.Capabilities)
	}
}
