package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// The record ($KIN_HOME/worktrees/<session>.json) is shared by every kin
// serving the session: each write is one locked read-modify-write of it
// as it is on disk, so writers never interleave on a temporary file, an
// apply never brings back a record another kin removed, and removing the
// worktree leaves nothing of it behind.
func TestRecordIsSharedSafely(t *testing.T) {
	_, home, info := created(t)
	ctx := context.Background()
	rec := statePath(home, sid)
	if fi, err := os.Stat(rec); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("record %v %v", fi, err)
	}
	if got, err := Load(home, sid); err != nil || got != info {
		t.Fatalf("Load = %+v %v, want %+v", got, err, info)
	}

	// many writers at once, as kins applying at the same moment: every
	// write lands whole, and the record stays readable throughout
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := update(home, sid, func(r *Info, exists bool) (bool, error) {
				if !exists {
					return false, fmt.Errorf("writer %d: no record", i)
				}
				r.Applied = fmt.Sprintf("tree-%02d", i)
				return true, nil
			}); err != nil {
				t.Error(err)
			}
			if _, err := Load(home, sid); err != nil {
				t.Errorf("writer %d read a torn record: %v", i, err)
			}
		}()
	}
	wg.Wait()
	got, err := Load(home, sid)
	if err != nil || len(got.Applied) != len("tree-00") {
		t.Fatalf("after concurrent writes: %+v %v", got, err)
	}
	got.Applied = ""
	if got != info {
		t.Fatalf("concurrent writes changed more than Applied: %+v", got)
	}

	// an apply whose record was removed meanwhile does not make it again
	write(t, filepath.Join(info.Path, "new.txt"), "new\n")
	if err := forget(home, sid); err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(ctx, home, info); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(home, sid); kind(err) != KindNone {
		t.Fatalf("the removed record came back: %v", err)
	}

	// Remove takes the record and its lock file
	if err := update(home, sid, func(r *Info, _ bool) (bool, error) { *r = info; return true, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := Remove(ctx, home, info, true); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(Dir(home)); len(entries) != 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("left in worktrees/: %v", names)
	}
}
