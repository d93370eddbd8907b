//go:build unix

package instructions_test

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/kin-dev/kin/agent/instructions"
)

// A FIFO named AGENTS.md would block a reader forever: only regular files
// are read (the directory's CLAUDE.md is).
func TestAFIFOIsNotRead(t *testing.T) {
	ws := dir(t)
	if err := syscall.Mkfifo(filepath.Join(ws, "AGENTS.md"), 0o644); err != nil {
		t.Skip(err)
	}
	write(t, filepath.Join(ws, "CLAUDE.md"), "fallback")
	got := instructions.NewLoader().Load("", []string{ws}, nil).Files
	if len(got) != 1 || got[0].Text != "fallback" {
		t.Errorf("files %s", paths(got))
	}
}
