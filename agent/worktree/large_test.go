package worktree

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Applying a worktree that holds a large file of its own (a build output,
// a dataset) keeps the patch on disk: held as a string and copied for each
// git apply, a 32 MiB file cost kin over 100 MiB of memory, and a file of
// a few GiB could end kin for want of it.
func TestApplyingALargeFileKeepsThePatchOutOfMemory(t *testing.T) {
	dir, home, info := created(t)
	ctx := context.Background()
	big := make([]byte, 32<<20)
	rand.Read(big) // base85 in the patch: 40 MiB
	if err := os.WriteFile(filepath.Join(info.Path, "data.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := Apply(ctx, home, info); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("Apply allocated %d MiB for a 32 MiB file", grew>>20)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "data.bin")); err != nil || !bytes.Equal(got, big) {
		t.Errorf("data.bin not applied whole: %d bytes, %v", len(got), err)
	}
}
