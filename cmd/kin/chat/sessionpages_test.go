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
