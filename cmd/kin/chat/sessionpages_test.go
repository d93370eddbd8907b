package chat_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kinsession "github.com/kin-dev/kin/agent/session"
)

// TestSessionsListsAPageAndMoreOnDemand: /sessions lists the newest 50 and
// says how to see more; "/sessions more" lists the next page, then says
// there are none.
func TestSessionsListsAPageAndMoreOnDemand(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(e.Home, "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)
	for i := range 60 {
		id := fmt.Sprintf("s_page_%03d", i)
		line, _ := json.Marshal(kinsession.Record{Type: kinsession.TypeSession, SessionID: id, Title: fmt.Sprintf("numbered %03d", i), Time: at.Add(time.Duration(i) * time.Second), Roots: []string{e.WS}})
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), append(line, '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := e.run(true, nil)
	s.send("/sessions")
	out := s.out.waitFor(t, "More sessions: /sessions more")
	if !strings.Contains(out, `"numbered 059"`) || !strings.Contains(out, `"numbered 010"`) || strings.Contains(out, `"numbered 009"`) {
		t.Fatalf("first page:\n%s", out)
	}
	s.send("/sessions more")
	out = s.out.waitFor(t, `"numbered 000"`)
	if strings.Count(out, "More sessions: /sessions more") != 1 {
		t.Errorf("the last page says there are more:\n%s", out)
	}
	s.send("/sessions more")
	s.out.waitFor(t, "No more sessions.")
	s.send("/quit")
	s.wait()
}

// A resume gives the newest page of a long session's history, and a
// session another kin has open is read-only here: kin chat showed the page
// as the whole history (an unfinished undo before it unseen) and said the
// next question continues the session, which it cannot.
func TestResumeSaysOlderHistoryAndReadOnly(t *testing.T) {
	f, s := fakeChat(t)
	f.set("session/resume", map[string]any{
		"session": map[string]any{"sessionId": "s_long", "title": "long"},
		"history": []map[string]any{{"type": "user", "turnId": "t_300", "text": "last question"}},
		"cursor":  "h1", "pending": []any{}, "model": "fake-1",
		"readOnly": true, "readOnlyReason": "session s_long is open in another kin (pid 42)\x1b[2J",
	})
	s.send("/resume s_long")
	out := s.out.waitFor(t, "last question")
	out = s.out.waitFor(t, "read-only: questions cannot continue")
	for _, want := range []string{"earlier history not shown", "open in another kin (pid 42)", `\x1b[2J`} {
		if !strings.Contains(out, want) {
			t.Errorf("the resume does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "your next question continues this session") || strings.Contains(out, "\x1b[2J") {
		t.Errorf("the resume of a read-only session:\n%q", out)
	}
	s.send("/quit")
	s.wait()
}
