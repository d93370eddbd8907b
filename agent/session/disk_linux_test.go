//go:build linux

package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/disktest"
	"github.com/kin-dev/kin/agent/session"
)

func TestAFullDiskLeavesNoHalfLine(t *testing.T) {
	dir := disktest.Small(t, "256k")
	st := session.NewStore(dir)
	info, log, err := st.Create("x", nil, "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	p := filepath.Join(dir, info.SessionID+".jsonl")
	before, _ := os.Stat(p)
	free := disktest.Fill(t, dir, "filler")
	_, _, err = log.Append(session.Record{Type: session.TypeUser, TurnID: "t1", Text: strings.Repeat("q", 64<<10)})
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("append on a full disk: %v", err)
	}
	if after, _ := os.Stat(p); after.Size() != before.Size() {
		t.Errorf("the failed write left %d bytes behind", after.Size()-before.Size())
	}
	free()
	if _, _, err := log.Append(session.Record{Type: session.TypeTurn, TurnID: "t1", Status: "failed"}); err != nil {
		t.Fatalf("append once space is back: %v", err)
	}
	recs, skipped, err := session.ReadRecords(p)
	if err != nil || skipped != 0 || len(recs) != 2 || recs[1].Type != session.TypeTurn {
		t.Errorf("records %+v skipped %d err %v", recs, skipped, err)
	}
}
