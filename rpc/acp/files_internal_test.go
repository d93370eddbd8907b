package acp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kin-dev/kin/agent/files"
)

// A client that writes but does not read: kin checks the disk against what
// the diff was shown against. A file swapped meanwhile for a sparse
// terabyte is a conflict found by its size, not read whole (nothing is
// sent to the client either: no connection is needed to find it).
func TestAFileGrownPastTheDiffIsAConflictNotARead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.txt")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Skip("no sparse files here:", err)
	}
	f.Close()
	_, err = clientFiles{write: true}.Write(context.Background(), files.Change{Path: p, Existed: true, Old: []byte("old\n"), New: []byte("new\n")})
	if !errors.Is(err, files.ErrConflict) {
		t.Fatalf("%v, want a conflict", err)
	}
}
