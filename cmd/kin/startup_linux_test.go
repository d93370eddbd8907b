//go:build linux

package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// childrenOf lists pid's children from /proc as "pid comm state" lines.
func childrenOf(pid int) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			comm := string(b[bytes.IndexByte(b, '(')+1 : i])
			out = append(out, e.Name()+" "+comm+" "+f[0])
		}
	}
	return out
}

// TestInitializeLeavesNoZombie: kin answers initialize without trying the
// sandbox (the answer says probing), tries it after initialized, and the
// try leaves no zombie (bubblewrap's init, adopted by kin as subreaper,
// used to stay one for kin's whole life).
func TestInitializeLeavesNoZombie(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("KIN_REQUIRE_BWRAP") == "1" {
			t.Fatal("KIN_REQUIRE_BWRAP=1 but bwrap is not installed")
		}
		t.Skip("bwrap is not installed")
	}
	p := startServe(t)
	p.send(req(1, "initialize", map[string]any{}))
	sb := p.until(idIs(1))["result"].(map[string]any)["sandbox"].(map[string]any)
	if sb["probing"] != true || sb["mechanism"] != "bubblewrap" {
		t.Fatalf("initialize's sandbox %v: want the expectation, probing", sb)
	}
	p.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	// The probe runs now, off the read loop. A zombie stays for good, a
	// running probe ends: wait for a whole second without any child.
	deadline := time.Now().Add(60 * time.Second) // the probe starts bwrap: slow on a loaded machine
	quietSince := time.Now()
	for time.Since(quietSince) < time.Second {
		if kids := childrenOf(p.cmd.Process.Pid); len(kids) > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("kin's children 60 s after initialized: %v", kids)
			}
			quietSince = time.Now()
		}
		time.Sleep(10 * time.Millisecond)
	}
}
