//go:build linux

// Package disktest gives tests a real disk that fills up: a small tmpfs
// mounted for the test, and a file that takes its last byte. It needs root
// (a test is skipped where mounting is not allowed) and is for tests only.
package disktest

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Small mounts a tmpfs of the given size ("256k", "1m") on a fresh folder
// and unmounts it when the test ends. It can be made read-only and it runs
// out of space as a real disk does.
func Small(t *testing.T, size string) string {
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

// Fill writes dir/name until the disk is full; free removes it, giving the
// space back.
func Fill(t *testing.T, dir, name string) (free func()) {
	t.Helper()
	p := filepath.Join(dir, name)
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
