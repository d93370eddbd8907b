//go:build !linux

package chat

import "os"

// IsTerminal reports whether f is a character device, which is how a
// terminal shows itself where no terminal ioctl is wired up.
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
