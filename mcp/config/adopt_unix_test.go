//go:build unix

package config_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/kin-dev/kin/mcp/config"
)

// A repository's .mcp.json that is a FIFO (a command may leave one) is
// refused by Adopt as Load refuses it, never waited on: the mcp/adopt
// request would otherwise never answer.
func TestAdoptNeverWaitsOnAFIFO(t *testing.T) {
	workdir, home := dirs(t)
	if err := syscall.Mkfifo(config.ForeignPath(workdir), 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { done <- config.NewStore(workdir, home).Adopt("planted") }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Adopt of a FIFO worked")
		}
	case <-time.After(time.Minute): // "forever", on a loaded machine too
		t.Fatal("Adopt waits on the FIFO")
	}
}
