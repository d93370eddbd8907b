package rpc_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// writeListed writes n one-record session logs into home's sessions
// folder, every third at the same time as the one before (the order's tie
// is the id), in folder a or b.
func writeListed(t testing.TB, home string, n int, a, b string) {
	t.Helper()
	dir := filepath.Join(home, "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)
	for i := range n {
		if i%3 != 2 {
			at = at.Add(time.Second)
		}
		root := a
		if i%4 == 0 {
			root = b
		}
		line, _ := json.Marshal(session.Record{Type: session.TypeSession, SessionID: fmt.Sprintf("s_list_%05d", i), Title: fmt.Sprintf("session %d", i), Time: at, Roots: []string{root}})
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("s_list_%05d.jsonl", i)), append(line, '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSessionListPages: session/list answers 50 rows by default, a limit's
// worth with one, and the pages its cursors name hold every row once, in
// order, whatever is made meanwhile; cwd keeps one folder's; bad limits
// and cursors are -32602.
func TestSessionListPages(t *testing.T) {
	e := newEnv(t)
	other := t.TempDir()
	writeListed(t, e.Home, 130, e.WS, other)
	ed := rpctest.Start(t, e.Options())
	ed.Initialize(e.WS)

	var first rpc.SessionListResult
	ed.MustCall("session/list", nil, &first)
	if len(first.Sessions) != 50 || first.NextCursor == "" || first.Sessions[0].SessionID != "s_list_00129" {
		t.Fatalf("default page: %d rows, next %q, first %+v", len(first.Sessions), first.NextCursor, first.Sessions[0])
	}
	var all rpc.SessionListResult
	ed.MustCall("session/list", rpc.SessionListParams{Limit: 1000}, &all)
	if len(all.Sessions) != 130 || all.NextCursor != "" {
		t.Fatalf("limit 1000: %d rows, next %q", len(all.Sessions), all.NextCursor)
	}
	for i := 1; i < len(all.Sessions); i++ {
		a, b := all.Sessions[i-1], all.Sessions[i]
		if a.UpdatedAt.Before(b.UpdatedAt) || a.UpdatedAt.Equal(b.UpdatedAt) && a.SessionID < b.SessionID {
			t.Fatalf("not newest first at %d: %v %v", i, a, b)
		}
	}

	page := func(p rpc.SessionListParams) []string {
		var ids []string
		for pages := 0; ; pages++ {
			var r rpc.SessionListResult
			ed.MustCall("session/list", p, &r)
			if len(r.Sessions) > p.Limit {
				t.Fatalf("%d rows for limit %d", len(r.Sessions), p.Limit)
			}
			for _, s := range r.Sessions {
				ids = append(ids, s.SessionID)
			}
			if pages == 0 {
				// made after the first page: at the top, not in the pages
				var made rpc.SessionResult
				ed.MustCall("session/new", rpc.SessionNewParams{Cwd: p.Cwd}, &made)
			}
			if r.NextCursor == "" {
				return ids
			}
			p.Cursor = r.NextCursor
		}
	}
	ids := page(rpc.SessionListParams{Limit: 7})
	if len(ids) != 130 {
		t.Fatalf("pages of 7 hold %d rows, want 130", len(ids))
	}
	for i, id := range ids {
		if id != all.Sessions[i].SessionID {
			t.Fatalf("row %d: %s, want %s", i, id, all.Sessions[i].SessionID)
		}
	}

	inOther := page(rpc.SessionListParams{Limit: 5, Cwd: other})
	if len(inOther) != 33 {
		t.Fatalf("cwd %s: %d rows, want 33", other, len(inOther))
	}
	var exact rpc.SessionListResult // a page that ends with the last row has no cursor
	ed.MustCall("session/list", rpc.SessionListParams{Limit: 34 + 1, Cwd: other}, &exact)
	if len(exact.Sessions) != 34 || exact.NextCursor != "" { // 33 and the one made above
		t.Fatalf("cwd page: %d rows, next %q", len(exact.Sessions), exact.NextCursor)
	}
	for _, bad := range []rpc.SessionListParams{{Limit: -1}, {Limit: 1001}, {Cursor: "nonsense"}, {Cwd: "relative"}} {
		if code, msg := ed.CallErr("session/list", bad); code != rpc.CodeInvalidParams {
			t.Errorf("session/list %+v: %d %q", bad, code, msg)
		}
	}
}
