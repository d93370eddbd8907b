package boundary_test

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/lockedfile"
)

// BenchmarkResolver is what the resolver adds to a read and to a write of
// a 4 KiB file five folders below a workspace root: boundary.ReadFile
// (through the root's os.Root) against os.ReadFile, and boundary.WriteFile
// (through the root, keeping the mode, synced) against the same
// temporary-file-then-rename write beneath the file's own folder
// (lockedfile.ReplaceFile). The goal is under 20 µs added to either. Each
// iteration runs all four, so load on the machine weighs on them alike;
// the metrics are medians in microseconds. The files are on a tmpfs
// (/dev/shm) where there is one, so that fsync, which dominates a write on
// a disk, does not drown what the resolver adds.
//
//	go test -run '^$' -bench Resolver -benchtime 20000x ./agent/boundary
func BenchmarkResolver(b *testing.B) {
	base := b.TempDir()
	if shm, err := os.MkdirTemp("/dev/shm", "kin-bench-"); err == nil {
		b.Cleanup(func() { os.RemoveAll(shm) })
		base = shm
	}
	root := filepath.Join(base, "ws")
	p := filepath.Join(root, "a", "b", "c", "d", "e", "file.go")
	data := make([]byte, 4<<10)
	write(b, p, string(data))
	if _, err := boundary.NewWorkspace([]string{root}, filepath.Join(base, "kinhome")); err != nil {
		b.Fatal(err)
	}
	steps := []func() error{
		func() error { _, err := os.ReadFile(p); return err },
		func() error { _, err := boundary.ReadFile(p); return err },
		func() error {
			return lockedfile.ReplaceFile(p, data, lockedfile.Options{Perm: 0o644, KeepMode: true, Sync: true})
		},
		func() error { return boundary.WriteFile(p, data, 0o644) },
	}
	times := make([][]time.Duration, len(steps))
	for b.Loop() {
		for i, step := range steps {
			start := time.Now()
			if err := step(); err != nil {
				b.Fatal(err)
			}
			times[i] = append(times[i], time.Since(start))
		}
	}
	median := func(ds []time.Duration) float64 {
		s := append([]time.Duration(nil), ds...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return float64(s[len(s)/2]) / float64(time.Microsecond)
	}
	b.ReportMetric(median(times[0]), "read-os-us")
	b.ReportMetric(median(times[1]), "read-boundary-us")
	b.ReportMetric(median(times[2]), "write-os-us")
	b.ReportMetric(median(times[3]), "write-boundary-us")
	b.ReportMetric(median(times[1])-median(times[0]), "added-read-us")
	b.ReportMetric(median(times[3])-median(times[2]), "added-write-us")
}
