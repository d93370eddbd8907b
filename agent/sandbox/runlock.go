package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/kin-dev/kin/agent/lockedfile"
)

// runLock's callers hold it for milliseconds (markers.go), so a kin
// waiting for it much longer is waiting for one stopped while holding it
// (SIGSTOP, Ctrl-Z on kin chat, a debugger, a write to a hung file
// system). A waiting flock cannot be abandoned, so runLock polls
// (TryLock) and gives up after a bound, and its callers then do nothing
// the lock guards: a hold refuses the command (run without it, another
// kin's release could remove its placeholders under it), a release or a
// sweep keeps what it would have removed, recorded, for a later one.
var (
	// lockWait is how long a hold or a release waits for the lock.
	lockWait = 10 * time.Second
	// lockGrace is how long a wait lasts once a wait of this process
	// gave up on the same lock, until one gets it: the commands and
	// releases queued behind the first (on placeholders' mutex, which
	// the wait holds) do not wait lockWait each.
	lockGrace = 250 * time.Millisecond
	// sweepWait bounds Sweep's wait: kin sweeps on the way to answering
	// initialize, and what a sweep leaves, a later release or sweep
	// removes.
	sweepWait = 500 * time.Millisecond
)

// lockPause is the longest pause between two tries for the lock.
const lockPause = 20 * time.Millisecond

// stalled are the run folders whose lock a wait of this process (of
// lockWait) gave up on, each with when that wait began, until a wait gets
// it.
var stalled = struct {
	sync.Mutex
	since map[string]time.Time
}{since: map[string]time.Time{}}

// LockError is why a command was not set up, or a removal not made: the
// lock on kin's run folder was not to be had.
type LockError struct {
	// Name is the lock file.
	Name string
	// Held is how long this process has found it held.
	Held time.Duration
	// PID is the process holding it, 0 when not known; Stopped says it
	// is stopped (SIGSTOP, Ctrl-Z, a debugger).
	PID     int
	Stopped bool
	// Cancelled is true when the wait ended because the turn was
	// cancelled, not after the bound.
	Cancelled bool
}

func (e *LockError) Error() string {
	who := "another kin process"
	if e.PID > 0 {
		who += fmt.Sprintf(" (pid %d)", e.PID)
	}
	state := "seems stopped"
	if e.Stopped {
		state = "is stopped"
	}
	if e.Cancelled {
		return fmt.Sprintf("sandbox: cancelled while waiting for the lock on the sandbox's placeholders (%s), which %s holds", e.Name, who)
	}
	resume := "fg where it runs, or kill -CONT with its pid"
	if e.PID > 0 {
		resume = fmt.Sprintf("fg where it runs, or kill -CONT %d", e.PID)
	}
	return fmt.Sprintf("sandbox: the lock on the sandbox's placeholders (%s) has been held for over %s: %s %s while holding it. Resume it (%s) or end it, then try again",
		e.Name, e.Held.Round(time.Second/10), who, state, resume)
}

// runLock takes the lock on the markers in runDir (in this process and
// across processes: flock on a fresh open of the lock file, which two
// opens in one process contend for too) and returns its release. It waits
// at most wait (lockGrace once a wait of lockWait gave up, until one gets
// it) or until ctx ends, then returns a *LockError. Without a runDir, or
// when the lock file cannot be made (then no marker can be written
// either), or flock is refused outright (then no kin can take it), there
// is nothing to coordinate.
func runLock(ctx context.Context, runDir string, wait time.Duration) (func(), error) {
	if runDir == "" {
		return noRelease, nil
	}
	name := filepath.Join(runDir, "placeholders.lock")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil && os.MkdirAll(runDir, 0o700) == nil {
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	}
	if err != nil {
		return noRelease, nil
	}
	start := time.Now()
	stalled.Lock()
	since, was := stalled.since[runDir]
	stalled.Unlock()
	if was {
		wait = min(wait, lockGrace)
	} else {
		since = start
	}
	deadline := start.Add(wait)
	pause := time.Millisecond
	for {
		err := lockedfile.TryLock(f)
		if err == nil {
			if was {
				stalled.Lock()
				delete(stalled.since, runDir)
				stalled.Unlock()
			}
			return func() {
				lockedfile.Unlock(f)
				f.Close()
			}, nil
		}
		if !errors.Is(err, lockedfile.ErrLocked) {
			f.Close()
			return noRelease, nil
		}
		left := time.Until(deadline)
		if ctx.Err() != nil || left <= 0 {
			break
		}
		t := time.NewTimer(min(pause, left))
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
		pause = min(2*pause, lockPause)
	}
	e := &LockError{Name: name, Held: time.Since(since), Cancelled: ctx.Err() != nil}
	e.PID, e.Stopped = lockHolder(f)
	f.Close()
	if !e.Cancelled && !was && wait >= lockWait {
		stalled.Lock()
		stalled.since[runDir] = since
		stalled.Unlock()
	}
	return nil, e
}

// runLocker takes runLock once, when first needed, for one hold.
type runLocker struct {
	ctx     context.Context
	dir     string
	release func()
	err     error
}

// lock takes runLock unless this hold holds it, or failed to take it.
func (l *runLocker) lock() error {
	if l.release == nil && l.err == nil {
		ctx := l.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		l.release, l.err = runLock(ctx, l.dir, lockWait)
	}
	return l.err
}

func (l *runLocker) unlock() {
	if l.release != nil {
		l.release()
		l.release = nil
	}
}
