package checkpoint_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/kin-dev/kin/agent/checkpoint"
)

// BenchmarkBefore is what keeping a checkpoint adds to a file write of
// kin's tools (a 16 KiB file, a new turn each time): its two contents and
// the manifest, on disk before the write.
func BenchmarkBefore(b *testing.B) {
	st := checkpoint.New(filepath.Join(b.TempDir(), "checkpoints"))
	old := make([]byte, 16<<10)
	for i := range old {
		old[i] = byte('a' + i%26)
	}
	p := filepath.Join(b.TempDir(), "f.go")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		next := append([]byte(fmt.Sprintf("// %d\n", i)), old...)
		if _, err := st.Before(checkpoint.Change{SessionID: "s_1", TurnID: fmt.Sprintf("t_%d", i), CallID: "c1",
			Path: p, Old: old, Existed: true, New: next}); err != nil {
			b.Fatal(err)
		}
	}
}
