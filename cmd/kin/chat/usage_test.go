package chat_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// A spend limit's approval shows which limit and its three choices; "a"
// raises the limit for the session.
func TestLimitApprovalOffersItsThreeChoices(t *testing.T) {
	f, s := fakeChat(t)
	f.notify("approval/request", map[string]any{
		"requestId": "ap_9", "sessionId": "s_fake", "turnId": "t_2", "kind": "limit",
		"title":   "This session has used 2,600 tokens of its limit of 3,000 tokens (limits.sessionTokens); the next model request adds about 2,602 tokens",
		"warning": "Continue this turn: it may pass this limit until it ends. Raise: the limit is 8,202 tokens for this session (settings.json is not changed). Stop: the turn ends now, and nothing more is sent.",
		"options": []map[string]any{{"optionId": "allow_once", "name": "Continue this turn", "kind": "allow_once"},
			{"optionId": "allow_always", "name": "Raise the limit to 8,202 tokens for this session", "kind": "allow_always"},
			{"optionId": "deny", "name": "Stop", "kind": "reject_once"}},
	})
	out := s.out.waitFor(t, "Go on? [y: Continue this turn / a: Raise the limit to 8,202 tokens for this session / N: Stop] ")
	if !strings.Contains(out, "[Spend limit] This session has used 2,600 tokens of its limit of 3,000 tokens") || !strings.Contains(out, "Stop: the turn ends now") {
		t.Errorf("the limit block:\n%s", out)
	}
	s.send("a")
	if got := f.waitCall("approval/respond", 1); got["requestId"] != "ap_9" || got["decision"] != "allow_always" {
		t.Errorf("respond %v", got)
	}
	s.send("/quit")
	s.wait()
}

// /usage shows the session's and the day's usage with the limits.
func TestUsageCommand(t *testing.T) {
	f, s := fakeChat(t)
	f.set("usage/summary", map[string]any{"scope": "day", "date": "2026-12-02", "inputTokens": 5200, "cachedInputTokens": 4400,
		"outputTokens": 120, "totalTokens": 5320, "cost": 0.00275, "currency": "USD",
		"limits": []map[string]any{{"name": "dayTokens", "limit": 1000000, "used": 5320}, {"name": "dayCost", "limit": 20, "used": 0.00275}}})
	s.send("/usage")
	out := s.out.waitFor(t, "limit dayCost: 0.0027 USD of 20.00 USD")
	for _, w := range []string{"Today (2026-12-02, every kin on this computer): 5,320 tokens (5,200 in, 4,400 of them cached, 120 out), 0.0027 USD",
		"limit dayTokens: 5,320 tokens of 1,000,000 tokens"} {
		if !strings.Contains(out, w) {
			t.Errorf("lacks %q:\n%s", w, out)
		}
	}
	if got := f.waitCall("usage/summary", 1); got["scope"] != "day" {
		t.Errorf("asked %v", got)
	}
	s.send("/quit")
	s.wait()
}

// Piped, even with --approve-all, a spend limit stops the turn: nobody
// chose to spend past it, and nothing is sent to the model.
func TestBinaryPipedStopsAtASpendLimit(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.Home, "settings.json"), []byte(`{"limits":{"sessionTokens":10}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e.Model.Script(modeltest.Reply{Text: []string{"never sent"}})
	r := e.chatPiped(t, "hello\n", "--approve-all")
	for _, want := range []string{"[Spend limit] This session has used 0 tokens of its limit of 10 tokens (limits.sessionTokens)",
		"stopped (non-interactive: nobody can choose to spend past the limit)", "limits.sessionTokens in $KIN_HOME/settings.json"} {
		if !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("lacks %q:\nstdout:\n%s\nstderr:\n%s", want, r.stdout, r.stderr)
		}
	}
	if n := len(e.Model.Requests()); n != 0 {
		t.Errorf("%d model requests", n)
	}
	if r.code == 0 {
		t.Errorf("exit 0 for a turn stopped at a limit")
	}
}
