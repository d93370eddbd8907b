//go:build !unix && !windows

package session

import (
	"os"
	"sync"
)

// Where kin knows no file lock (plan9, wasm), one owner is kept per process
// only: two kin processes on one KIN_HOME are not kept apart.
var held sync.Map // path -> struct{}

func tryLock(f *os.File) error {
	if _, dup := held.LoadOrStore(f.Name(), struct{}{}); dup {
		return errLocked
	}
	return nil
}

func lockShared(*os.File) error    { return nil }
func lockExclusive(*os.File) error { return nil }
func unlock(f *os.File) error {
	held.Delete(f.Name())
	return nil
}

const removeWhileLocked = true
