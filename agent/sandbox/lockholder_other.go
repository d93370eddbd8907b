//go:build !linux

package sandbox

import "os"

// lockHolder is not known here (no /proc/locks).
func lockHolder(*os.File) (pid int, stopped bool) { return 0, false }
