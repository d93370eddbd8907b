package rpc_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// The attack: the person's UserPromptSubmit hook keeps secrets out of what
// goes to the model (exit 2 on a prompt that carries one). The same words
// sent with turn/steer while a turn runs reached the model past it: steered
// words never met the hook. Now they pass it as a question does; blocked
// words are not sent and the person is told why.
func TestSteeredWordsPassTheUserPromptSubmitHook(t *testing.T) {
	e := newEnv(t)
	scripts := filepath.Join(e.Home, "hooks")
	if err := os.MkdirAll(scripts, 0o700); err != nil {
		t.Fatal(err)
	}
	guard := filepath.Join(scripts, "no-secrets.sh")
	if err := os.WriteFile(guard, []byte("#!/bin/sh\nif grep -q 'SECRET-'; then echo 'no secrets in prompts' >&2; exit 2; fi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.settings(hooksJSON("UserPromptSubmit", "", "sh "+guard, 0))
	hold := make(chan struct{})
	e.Model.Script(
		modeltest.Reply{Text: []string{"Here", " is all"}, Hold: hold},
		modeltest.Reply{Text: []string{"and more"}},
	)
	ed, sid := e.editor()
	tid := start(t, ed, sid, "explain")
	ed.Wait("turn/delta", rpctest.Field("turnId", tid))
	ed.MustCall("turn/steer", rpc.TurnSteerParams{SessionID: sid, TurnID: tid, Input: "the key is SECRET-7f3a"}, nil)
	ed.MustCall("turn/steer", rpc.TurnSteerParams{SessionID: sid, TurnID: tid, Input: "in French please"}, nil)
	close(hold)
	if done := completed(ed, tid); done["status"] != "completed" {
		t.Fatalf("turn %v", done)
	}
	reqs := e.Model.Requests()
	for i, r := range reqs {
		if strings.Contains(r.Text(), "SECRET-7f3a") {
			t.Errorf("request %d carries the words the person's hook blocks", i)
		}
	}
	if len(reqs) != 2 || !strings.Contains(reqs[1].LastUserText(), "in French please") {
		t.Errorf("the words the hook lets through did not join: %d requests", len(reqs))
	}
	ed.Wait("notice", rpctest.All(rpctest.Field("source", "hooks"), func(m map[string]any) bool {
		msg := fmt.Sprint(m["message"])
		return strings.Contains(msg, "not sent to the model") && strings.Contains(msg, "no secrets in prompts")
	}))
	for _, it := range historyOf(t, ed, sid) {
		if strings.Contains(mustJSON(it), "SECRET-7f3a") {
			t.Errorf("history keeps the blocked words: %v", it)
		}
	}
}

// Words steered during the final answer that a hook blocks do not make the
// turn ask the model again for nothing: the answer stands, one request.
func TestBlockedSteerDuringTheFinalAnswerEndsTheTurn(t *testing.T) {
	e := newEnv(t)
	e.settings(hooksJSON("UserPromptSubmit", "", "if grep -q 'SECRET-'; then echo 'no secrets' >&2; exit 2; fi", 0))
	steerTheFinalAnswer(t, e, "SECRET-1 is the key")
	if reqs := e.Model.Requests(); len(reqs) != 1 {
		t.Errorf("%d requests; the blocked words alone sent another", len(reqs))
	}
}
