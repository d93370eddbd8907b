//go:build linux

package session_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kin-dev/kin/agent/session"
)

// smallDisk mounts a tmpfs of the given size (a real filesystem that fills
// up); the test is skipped where mounting is not allowed.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Skipf("cannot mount a small tmpfs (needs root): %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fillDisk writes a file until the disk is full; removing it frees the
// space again.
func fillDisk(t *testing.T, dir string) (free func()) {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	f.Close()
	return func() { os.Remove(p) }
}

func TestAFullDiskLeavesNoHalfLine(t *testing.T) {
	dir := smallDisk(t, "256k")
	st := session.NewStore(dir)
	info, log, err := st.Create("x", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	p := filepath.Join(dir, info.SessionID+".jsonl")
	before, _ := os.Stat(p)
	free := fillDisk(t, dir)
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
