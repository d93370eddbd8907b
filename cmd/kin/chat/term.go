package chat

import (
	"os"

	"golang.org/x/term"
)

// IsTerminal reports whether f is a terminal (not /dev/null, which is a
// character device too).
func IsTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// width is the terminal's width in columns (80 when it does not say).
func (t *tty) width() int {
	w, _ := t.size()
	return w
}
