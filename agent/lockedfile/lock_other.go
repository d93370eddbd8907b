//go:build !unix && !windows

package lockedfile

import (
	"os"
	"sync"
)

// Where kin knows no file lock (plan9, wasm), one owner is kept per process
// only: two kin processes on one KIN_HOME are not kept apart.
var held sync.Map // path -> struct{}

// RemoveWhileLocked: the in-process lock does not care.
const RemoveWhileLocked = true

// TryLock takes the in-process lock of f's name without waiting.
func TryLock(f *os.File) error {
	if _, dup := held.LoadOrStore(f.Name(), struct{}{}); dup {
		return ErrLocked
	}
	return nil
}

// LockShared does nothing here.
func LockShared(*os.File) error { return nil }

// LockExclusive does nothing here.
func LockExclusive(*os.File) error { return nil }

// Unlock releases TryLock's in-process lock.
func Unlock(f *os.File) error {
	held.Delete(f.Name())
	return nil
}
