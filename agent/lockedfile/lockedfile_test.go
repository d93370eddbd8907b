package lockedfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kin-dev/kin/agent/lockedfile"
)

func TestUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "f.json")
	boom := errors.New("boom")
	steps := []struct {
		name    string
		fn      func(data []byte, exists bool) ([]byte, error)
		wantErr error
		want    string // content after; "-" = absent
	}{
		{"absent, error aborts", func(d []byte, ex bool) ([]byte, error) { return []byte("x"), boom }, boom, "-"},
		{"absent, nil writes nothing", func(d []byte, ex bool) ([]byte, error) { return nil, nil }, nil, "-"},
		{"create", func(d []byte, ex bool) ([]byte, error) {
			if ex || d != nil {
				t.Errorf("create saw exists=%v data=%q", ex, d)
			}
			return []byte("one"), nil
		}, nil, "one"},
		{"modify", func(d []byte, ex bool) ([]byte, error) { return append(d, " two"...), nil }, nil, "one two"},
		{"error keeps content", func(d []byte, ex bool) ([]byte, error) { return []byte("lost"), boom }, boom, "one two"},
	}
	for _, s := range steps {
		if err := lockedfile.Update(path, s.fn); !errors.Is(err, s.wantErr) {
			t.Fatalf("%s: err %v", s.name, err)
		}
		data, err := os.ReadFile(path)
		got := string(data)
		if errors.Is(err, os.ErrNotExist) {
			got = "-"
		}
		if got != s.want {
			t.Fatalf("%s: content %q, want %q", s.name, got, s.want)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != lockedfile.FileMode {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(filepath.Dir(path)); fi.Mode().Perm() != lockedfile.DirMode {
		t.Errorf("dir mode %v", fi.Mode().Perm())
	}
}

// Concurrent read-modify-write cycles never lose an edit: each one holds
// the lock across its read and its write (every Update opens the lock file
// anew, as another process would).
func TestConcurrentUpdatesLoseNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "n")
	const n = 32
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := lockedfile.Update(path, func(d []byte, _ bool) ([]byte, error) {
				return append(d, 'x'), nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if data, _ := os.ReadFile(path); len(data) != n {
		t.Fatalf("%d edits kept, want %d", len(data), n)
	}
}
