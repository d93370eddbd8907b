package reaper

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Started puts a process's start on the wall clock to within a tick (the
// kernel rounds it down to one), and reads its name whatever it holds (a
// name with a ')' and spaces, which the fields after it must not take in).
func TestStartedIsWhenAndWhatStarted(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip(err)
	}
	odd := filepath.Join(t.TempDir(), "s) (x 1")
	if err := os.Symlink(sleep, odd); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(odd, "30")
	before := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	at, comm, ok := Started(cmd.Process.Pid)
	if !ok {
		t.Fatal("cannot read a child's start")
	}
	if tick := time.Second / userHZ; at.Before(before.Add(-tick-time.Millisecond)) || at.After(after) {
		t.Errorf("started at %v, between %v and %v", at, before, after)
	}
	if comm != "s) (x 1" {
		t.Errorf("name %q", comm)
	}
	if _, _, ok := Started(1<<22 + 1); ok { // above pid_max
		t.Errorf("a start read for no process")
	}
}
