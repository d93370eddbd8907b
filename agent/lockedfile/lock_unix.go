//go:build unix

package lockedfile

import (
	"errors"
	"os"
	"syscall"
)

// RemoveWhileLocked says whether a locked file can be unlinked while its
// lock is held (Unix: yes), so a delete can keep others out until it is
// gone.
const RemoveWhileLocked = true

// TryLock takes an exclusive lock on f without waiting; ErrLocked when
// someone holds one. The lock belongs to this open file (flock, not fcntl),
// so a second open of the same file in the same process is refused too,
// and the kernel drops it when the process dies, however it dies.
func TryLock(f *os.File) error {
	err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrLocked
	}
	return err
}

// LockShared waits for a shared lock on f.
func LockShared(f *os.File) error { return flock(f, syscall.LOCK_SH) }

// LockExclusive waits for an exclusive lock on f.
func LockExclusive(f *os.File) error { return flock(f, syscall.LOCK_EX) }

// Unlock releases f's lock.
func Unlock(f *os.File) error { return flock(f, syscall.LOCK_UN) }

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
