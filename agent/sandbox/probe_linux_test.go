//go:build linux

package sandbox

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/reaper"
)

// TestProbeLeavesNoZombie: with kin a subreaper (as kin serve is), the
// probe's bubblewrap leaves its init to kin; the probe reaps it. New alone
// probes nothing. Only a zombie the probe left counts: once the test
// process is a subreaper, the other tests' bubblewrap inits are left to it
// too, and nothing in a test reaps those (with -count=2 they were there
// before this probe ran; on a loaded machine one could still be tearing
// down when the probe began, and became a zombie during it: so what was
// a child before the probe, alive or not, is not the probe's).
func TestProbeLeavesNoZombie(t *testing.T) {
	if err := reaper.Enable(); err != nil {
		t.Skip(err)
	}
	before := children(func(string) bool { return true })
	probes.mu.Lock()
	probes.done = nil // this test's probe runs, whatever ran before
	probes.mu.Unlock()
	sb := New(Config{Hidden: []string{t.TempDir()}})
	if _, probed := sb.Expected(); probed {
		t.Fatal("New probed")
	}
	st := sb.Status()
	if !st.Confined {
		if os.Getenv("KIN_REQUIRE_BWRAP") == "1" {
			t.Fatalf("no sandbox: %s", st.Reason)
		}
		t.Skip(st.Reason)
	}
	if got, probed := sb.Expected(); !probed || got != st {
		t.Fatalf("Expected after the probe: %+v %v, want %+v", got, probed, st)
	}
	for pid, stat := range zombies() {
		if _, old := before[pid]; !old {
			t.Errorf("zombie child after the probe: %s", stat)
		}
	}
}

// zombies are this process's zombie children, by process id, with their
// stat line.
func zombies() map[string]string {
	return children(func(state string) bool { return state == "Z" })
}

// children are this process's children in a state that keep says to,
// by process id, with their stat line.
func children(keep func(state string) bool) map[string]string {
	out := map[string]string{}
	self := strconv.Itoa(os.Getpid())
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 1 && f[1] == self && keep(f[0]) {
			out[e.Name()] = string(b)
		}
	}
	return out
}
