package reaper

import (
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
)

// The tree walk finds below kin exactly what reading all of /proc finds:
// children, grandchildren, what left the group with setsid, what was
// re-parented to kin (a subreaper) when its parent exited, and zombies.
func TestTheTreeIsWhatAllOfProcHasBelowKin(t *testing.T) {
	if err := Enable(); err != nil {
		t.Skip(err)
	}
	// a group with a child, a grandchild, one that left with setsid, one
	// orphaned (its parent, the subshell, exits at once) and a zombie
	cmd := exec.Command("/bin/sh", "-c", `sleep 30 & (sleep 30 &) ; setsid sleep 30 & sh -c 'sleep 30' & echo ready; wait`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		Shutdown(0)
	}()
	buf := make([]byte, 6)
	out.Read(buf)
	zombie := exec.Command("/bin/true")
	zombie.Start() // not waited for yet: a zombie child of kin
	defer zombie.Wait()

	below := func(tb table) []ident {
		var ids []ident
		for _, p := range tb.descendants(self) {
			ids = append(ids, p.ident)
		}
		slices.SortFunc(ids, func(a, b ident) int { return a.pid - b.pid })
		return ids
	}
	// On a loaded machine the group still forks and its subshell still
	// exits long after "ready" (a fixed 100 ms did not do): compare a tree
	// walk with all of /proc once the processes are all there (the orphan
	// re-parented to kin) and nothing changed while the walk read.
	orphaned := func(tb table) bool {
		for _, p := range tb.procs {
			if p.ppid == self && p.pid != cmd.Process.Pid && p.pid != zombie.Process.Pid && p.live() {
				return true
			}
		}
		return false
	}
	var got, want []ident
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		all := readAll()
		before := below(all)
		tree, ok := readTree()
		if !ok {
			t.Skip("no children lists in /proc here")
		}
		got, want = below(tree), below(readAll())
		if slices.Equal(before, want) && len(want) >= 6 && orphaned(all) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the processes below kin did not settle in 30 s: %v, then %v (orphan re-parented to kin: %v)", before, want, orphaned(all))
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the tree walk found %v below kin, all of /proc %v", got, want)
	}
	alive, ok := liveInGroup(cmd.Process.Pid)
	if !alive || !ok {
		t.Errorf("liveInGroup of a running group: %v %v", alive, ok)
	}
}

// BenchmarkReadTree is the look at kin's tree that the end of every
// command makes, several times: a command's shell with three processes
// below it.
//
//	go test -run '^$' -bench ReadTree ./agent/reaper
func BenchmarkReadTree(b *testing.B) {
	cmd := exec.Command("/bin/sh", "-c", `sleep 30 & sleep 30 & sh -c 'sleep 30' & echo ready; wait`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	out.Read(make([]byte, 6))
	time.Sleep(50 * time.Millisecond)
	for b.Loop() {
		if t, ok := readTree(); !ok || len(t.procs) < 4 {
			b.Fatalf("read %d processes (ok %v)", len(t.procs), ok)
		}
	}
}
