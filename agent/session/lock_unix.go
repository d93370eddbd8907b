//go:build unix

package session

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive lock on f without waiting. The lock belongs to
// this open file (flock, not fcntl), so a second open of the same log in the
// same process is refused too, and the kernel drops it when the process
// dies, however it dies.
func tryLock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errLocked
		}
		return err
	}
}

// lockShared and lockExclusive wait for a lock on f (the index's lock file).
func lockShared(f *os.File) error    { return flock(f, syscall.LOCK_SH) }
func lockExclusive(f *os.File) error { return flock(f, syscall.LOCK_EX) }
func unlock(f *os.File) error        { return flock(f, syscall.LOCK_UN) }

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// removeWhileLocked: a locked file can be unlinked, so a delete holds the
// lock until the log is gone.
const removeWhileLocked = true
