//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package chat

import (
	"errors"
	"os"
)

// EditorSupported says whether kin chat has its line editor here; where it
// has not (Windows), a terminal reads whole lines as it does piped input,
// with the terminal's own editing.
const EditorSupported = false

type tty struct{ in, out *os.File }

func openTTY(in, out *os.File) (*tty, error) {
	return nil, errors.New("no line editor on this system")
}

func (t *tty) raw() error                   { return nil }
func (t *tty) restore()                     {}
func (t *tty) size() (int, int)             { return 80, 24 }
func (t *tty) suspend(before, after func()) {}
