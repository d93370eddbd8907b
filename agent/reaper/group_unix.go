//go:build unix

package reaper

import (
	"errors"
	"syscall"
)

// GroupAlive reports whether a process of the process group pgid still
// runs. Zombies (dead, waiting for init to reap them) do not count: they
// hold nothing but a table slot. On Linux /proc tells them apart; elsewhere
// any member kill(2) reaches counts. Commands and stdio MCP servers both
// wait on this after stopping their group.
func GroupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	alive, ok := liveInGroup(pgid)
	if !ok {
		return true // no /proc: trust kill(2)
	}
	return alive
}
