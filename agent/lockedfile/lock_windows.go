//go:build windows

package lockedfile

import (
	"os"

	"golang.org/x/sys/windows"
)

// allBytes locks the whole file, as far as it may ever grow: LockFileEx
// locks byte ranges, and the lock file is never written anyway.
const allBytes = ^uint32(0)

// lockFile blocks until f holds an exclusive LockFileEx lock.
func lockFile(f *os.File) error {
	ol := new(windows.Overlapped)
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, allBytes, allBytes, ol)
}

func unlockFile(f *os.File) error {
	ol := new(windows.Overlapped)
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, allBytes, allBytes, ol)
}
