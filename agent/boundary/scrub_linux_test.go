//go:build linux

package boundary_test

import (
	"testing"

	"github.com/kin-dev/kin/agent/boundary"
)

// What erasing the model keys from kin's environment block costs at start
// (one read of /proc/self/stat and of the block; a write when a key is
// there):
//
//	go test -run '^$' -bench ScrubEnviron ./agent/boundary
func BenchmarkScrubEnviron(b *testing.B) {
	for b.Loop() {
		if _, err := boundary.ScrubEnviron([]string{"OPENAI_API_KEY_NOT_SET_HERE"}); err != nil {
			b.Fatal(err)
		}
	}
}
