package acp

import (
	"path/filepath"
	"testing"

	kinsession "github.com/kin-dev/kin/agent/session"
)

// session/list's pages followed each other by a count of rows: a session
// made (in another window) or deleted between two pages shifted every row,
// so the next page repeated one the client had, or never showed one that
// was there all along. A page goes on after the last row the client got,
// as kin serve's do.
func TestSessionListPagesNeitherRepeatNorSkip(t *testing.T) {
	w := newWorld(t)
	store := kinsession.NewStore(filepath.Join(w.home, "sessions"))
	all := map[string]bool{}
	for range listPage + 20 {
		info, log, err := store.Create("old", []string{w.ws}, "", "")
		if err != nil {
			t.Fatal(err)
		}
		log.Close()
		all[info.SessionID] = true
	}
	c := w.connect(nil)
	c.initialize(nil)
	var first ListSessionsResponse
	c.call(MethodSessionList, map[string]any{}, &first)
	if len(first.Sessions) != listPage || first.NextCursor == "" {
		t.Fatalf("first page: %d rows, cursor %q", len(first.Sessions), first.NextCursor)
	}
	// Meanwhile: a new session elsewhere, and one of the next page's gone.
	c.newSession()
	seen := map[string]bool{}
	for _, s := range first.Sessions {
		seen[s.SessionID] = true
	}
	var gone string
	for id := range all {
		if !seen[id] {
			gone = id
			break
		}
	}
	if err := store.Delete(gone); err != nil {
		t.Fatal(err)
	}
	delete(all, gone)
	var second ListSessionsResponse
	c.call(MethodSessionList, map[string]any{"cursor": first.NextCursor}, &second)
	for _, s := range second.Sessions {
		if seen[s.SessionID] {
			t.Errorf("the second page repeats %s", s.SessionID)
		}
		seen[s.SessionID] = true
	}
	for id := range all {
		if !seen[id] {
			t.Errorf("%s, there all along, is on neither page", id)
		}
	}
}
