//go:build windows

package lockedfile

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// RemoveWhileLocked: Windows does not delete an open file, so a delete
// closes (and unlocks) the file first.
const RemoveWhileLocked = false

// Windows locks are mandatory for the bytes they cover, so kin locks one
// byte far past any file's end: readers of a locked session log are never
// blocked, and a second locker (in this process or another) is refused.
// The lock dies with the handle, and with the process.
const lockOffset = 1 << 62

func lockFile(f *os.File, flags uint32) error {
	ol := windows.Overlapped{Offset: uint32(lockOffset & 0xffffffff), OffsetHigh: uint32(lockOffset >> 32)}
	return windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, &ol)
}

// TryLock takes an exclusive lock on f without waiting; ErrLocked when
// someone holds one.
func TryLock(f *os.File) error {
	err := lockFile(f, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return ErrLocked
	}
	return err
}

// LockShared waits for a shared lock on f.
func LockShared(f *os.File) error { return lockFile(f, 0) }

// LockExclusive waits for an exclusive lock on f.
func LockExclusive(f *os.File) error { return lockFile(f, windows.LOCKFILE_EXCLUSIVE_LOCK) }

// Unlock releases f's lock.
func Unlock(f *os.File) error {
	ol := windows.Overlapped{Offset: uint32(lockOffset & 0xffffffff), OffsetHigh: uint32(lockOffset >> 32)}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}
