package sandbox

import "time"

// setLockWaits lowers runLock's bounds for a test (lockWait, lockGrace,
// sweepWait), once this process's removals settled, and returns what
// restores them; the run folders a wait gave up on are forgotten then.
func setLockWaits(wait, grace, sweep time.Duration) (restore func()) {
	Settle()
	w, g, s := lockWait, lockGrace, sweepWait
	lockWait, lockGrace, sweepWait = wait, grace, sweep
	return func() {
		Settle()
		lockWait, lockGrace, sweepWait = w, g, s
		stalled.Lock()
		clear(stalled.since)
		stalled.Unlock()
	}
}
