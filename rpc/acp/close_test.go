package acp

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	kinsession "github.com/kin-dev/kin/agent/session"
)

// session/close frees what the session holds ("The Agent MUST ... free up
// any resources associated with it"), and its ownership most of all: the
// person closed it in one editor and goes on in another (or in kin chat).
// kin kept the session's log locked until the whole connection ended, so
// every other kin saw it read-only ("open in another kin") although nobody
// had it open. Once closed, another kin takes it; a load here again takes
// it back once that kin lets go, and the conversation goes on from
// everything the log holds.
func TestClosingASessionLetsAnotherKinTakeIt(t *testing.T) {
	w := newWorld(t)
	c := w.connect(nil)
	c.initialize(nil)
	sid := c.newSession()
	w.model.Script(modeltest.Reply{Text: []string{"first answer"}})
	c.prompt(sid, text("first question"))
	c.call(MethodSessionClose, SessionIDRequest{SessionID: sid}, nil)

	other := kinsession.NewStore(filepath.Join(w.home, "sessions"))
	log, err := other.Open(sid)
	if err != nil {
		t.Fatalf("another kin cannot take the closed session: %v", err)
	}
	// Loaded again here while the other kin has it: read-only.
	var res LoadSessionResponse
	c.call(MethodSessionLoad, map[string]any{"sessionId": sid, "cwd": w.ws, "mcpServers": []any{}}, &res)
	err = c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{text("now?")}}, nil)
	if err == nil || !strings.Contains(err.Error(), "another kin") {
		t.Fatalf("a prompt while another kin has the session: %v", err)
	}
	// The other kin adds to it and lets go.
	if _, _, err := log.Append(kinsession.Record{Type: kinsession.TypeTitle, Title: "named elsewhere"}); err != nil {
		t.Fatal(err)
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	w.model.Script(modeltest.Reply{Text: []string{"second answer"}})
	if r := c.prompt(sid, text("second question")); r.StopReason != StopEndTurn {
		t.Fatalf("the prompt once the other kin let go: %q", r.StopReason)
	}
	reqs := w.model.Requests()
	last := reqs[len(reqs)-1]
	raw := string(last.Raw)
	for _, want := range []string{"first question", "first answer", "second question"} {
		if !strings.Contains(raw, want) {
			t.Errorf("the model's request after taking the session back lacks %q", want)
		}
	}
	if _, err := other.Open(sid); !errors.Is(err, kinsession.ErrOwned) {
		t.Errorf("taken back, the session is not this kin's: %v", err)
	}
}
