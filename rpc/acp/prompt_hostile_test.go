package acp

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
)

// Prompts as a hostile or hurried client sends them: stopped before their
// turn began, with too much attached, or while another runs.

// The person stops a prompt right after sending it (Escape in Zed): the
// session/cancel arrives while kin still reads the prompt's attached file
// through the editor (fs/read_text_file), before the turn began. The
// cancel was lost: no turn was running yet, so the turn then ran to its
// end, asking the model. It must answer cancelled, and ask nothing.
func TestACancelBeforeThePromptsTurnBeginsStopsIt(t *testing.T) {
	w := newWorld(t)
	w.write("notes.txt", "some notes\n")
	c := w.connect(nil)
	c.initialize(map[string]any{"fs": map[string]any{"readTextFile": true}})
	reading, release := c.holdReads(func() (any, error) { return ReadTextFileResponse{Content: "some notes\n"}, nil })
	sid := c.newSession()
	w.model.Script(modeltest.Reply{Text: []string{"an answer the person stopped"}})

	link := map[string]any{"type": "resource_link", "uri": "file://" + filepath.Join(w.ws, "notes.txt"), "name": "notes.txt"}
	p := c.promptAsync(sid, text("read this"), link)
	<-reading
	c.notify(NotifySessionCancel, SessionIDRequest{SessionID: sid})
	// session/cancel is a notification: a request after it on the session
	// has been read once it is answered.
	c.call(MethodSessionSetMode, map[string]any{"sessionId": sid, "modeId": "agent"}, nil)
	close(release)
	p.wantCancelled(t, "session/cancel before its turn")
	if n := len(w.model.Requests()); n != 0 {
		t.Errorf("the model was asked %d times for a prompt stopped before its turn", n)
	}
	// The next prompt is the person's new question: it runs.
	w.model.Script(modeltest.Reply{Text: []string{"fine"}})
	if res := c.prompt(sid, text("and now?")); res.StopReason != StopEndTurn {
		t.Errorf("the next prompt answered %q", res.StopReason)
	}
}

// Only a cancel read after a prompt stops it: a client that cancelled
// before, then closed and loaded the session again and sent a prompt at
// once (all in one write) gets its prompt answered.
func TestACancelBeforeAPromptDoesNotStopIt(t *testing.T) {
	w := newWorld(t)
	c := w.rawConnect()
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":"new","method":"session/new","params":{"cwd":"` + w.ws + `","mcpServers":[]}}`)
	sid := c.answer(`"new"`)["result"].(map[string]any)["sessionId"].(string)
	w.model.Script(modeltest.Reply{Text: []string{"answered"}})
	cancel := `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"` + sid + `"}}`
	c.send(strings.Join([]string{cancel, cancel,
		`{"jsonrpc":"2.0","id":"close","method":"session/close","params":{"sessionId":"` + sid + `"}}`,
		`{"jsonrpc":"2.0","id":"load","method":"session/load","params":{"sessionId":"` + sid + `","cwd":"` + w.ws + `","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"hi"}]}}`,
	}, "\n"))
	for _, id := range []string{`"close"`, `"load"`} {
		if a := c.answer(id); a["error"] != nil {
			t.Fatalf("%s: %v", id, a["error"])
		}
	}
	a := c.answer(`"p"`)
	if r, _ := a["result"].(map[string]any); r == nil || r["stopReason"] != StopEndTurn {
		t.Fatalf("a prompt sent after the cancels answered %v, want end_turn", a)
	}
}

// A client that links many files (an @-mention of a folder, or a bug that
// links one file again and again) had kin read every one, up to 256 KiB
// each, into one question: 4,000 links in a 400 KB line were a gigabyte in
// kin's memory, for a question whose record keeps 2 MiB. Once the
// attachments pass what one question holds, the prompt is refused, naming
// the block, and nothing more is read.
func TestAPromptsAttachmentsAreBounded(t *testing.T) {
	w := newWorld(t)
	path := w.write("big.txt", strings.Repeat("0123456789abcdef\n", 250<<10/17))
	c := w.connect(nil)
	c.initialize(nil)
	sid := c.newSession()
	blocks := []any{text("read these")}
	for range 4000 {
		blocks = append(blocks, map[string]any{"type": "resource_link", "uri": "file://" + path, "name": "big.txt"})
	}
	err := c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": blocks}, nil)
	if code := rpcCode(t, err); code != rpc.CodeInvalidParams || !strings.Contains(err.Error(), "more than kin takes") {
		t.Fatalf("a prompt with 4000 links: %v", err)
	}
	if n := len(w.model.Requests()); n != 0 {
		t.Errorf("the model was asked %d times", n)
	}
	// A few attachments are still welcome.
	w.model.Script(modeltest.Reply{Text: []string{"read"}})
	if res := c.prompt(sid, blocks[:3]...); res.StopReason != StopEndTurn {
		t.Errorf("a prompt with two links answered %q", res.StopReason)
	}
}

// The person stops a prompt while kin reads its attachment through the
// editor, and the editor, told of the cancel, fails that read: the prompt
// answered an error ("invalid params: ... the editor could not read"), as
// if the person had sent something wrong. It answers cancelled.
func TestACancelWhileAnAttachmentIsReadAnswersCancelled(t *testing.T) {
	w := newWorld(t)
	w.write("notes.txt", "some notes\n")
	c := w.connect(nil)
	c.initialize(map[string]any{"fs": map[string]any{"readTextFile": true}})
	reading, release := c.holdReads(func() (any, error) {
		return nil, &jsonrpc2.Error{Code: -32603, Message: "request cancelled by the editor"}
	})
	sid := c.newSession()
	link := map[string]any{"type": "resource_link", "uri": "file://" + filepath.Join(w.ws, "notes.txt"), "name": "notes.txt"}
	p := c.promptAsync(sid, text("read this"), link)
	<-reading
	c.notify(NotifySessionCancel, SessionIDRequest{SessionID: sid})
	c.call(MethodSessionSetMode, map[string]any{"sessionId": sid, "modeId": "agent"}, nil) // the cancel was read
	close(release)
	p.wantCancelled(t, "session/cancel during its attachment's read")
}

// A second prompt, or a model change, while kin works on a prompt is
// refused in ACP's words: kin's message told the person to "wait for
// turn/completed", a notification of kin serve's that no ACP client knows.
func TestBusyRefusalsSpeakACP(t *testing.T) {
	w := newWorld(t)
	c := w.connect(nil)
	c.initialize(nil)
	sid := c.newSession()
	hold := make(chan struct{})
	w.model.Script(modeltest.Reply{Text: []string{"working ", "on it"}, Hold: hold})
	answered := make(chan error, 1)
	go func() {
		answered <- c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{text("first")}}, nil)
	}()
	w.model.WaitRequests(1, wait)
	for name, err := range map[string]error{
		"prompt":    c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{text("second")}}, nil),
		"set_model": c.tryCall(MethodSessionSetModel, map[string]any{"sessionId": sid, "modelId": "gpt-5.1"}, nil),
	} {
		if err == nil || strings.Contains(err.Error(), "turn/") || !strings.Contains(err.Error(), "prompt") {
			t.Errorf("%s while a prompt runs: %v", name, err)
		}
	}
	close(hold)
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
}
