//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package chat

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// EditorSupported says whether kin chat has its line editor here (where
// the terminal can be put in raw mode and has job control).
const EditorSupported = true

// tty is the terminal kin chat edits on: raw for the whole session, so
// that nothing typed is ever echoed by the terminal into the output and
// Ctrl-C is a key, handled in order with what was typed before it. Output
// processing stays on (a newline is still CR LF).
type tty struct {
	in, out *os.File
	saved   *unix.Termios
}

func openTTY(in, out *os.File) (*tty, error) {
	t, err := unix.IoctlGetTermios(int(in.Fd()), ioctlGetTermios)
	if err != nil {
		return nil, err
	}
	saved := *t
	tt := &tty{in: in, out: out, saved: &saved}
	if err := tt.raw(); err != nil {
		return nil, err
	}
	return tt, nil
}

// raw puts the terminal in raw mode, as cfmakeraw(3) does but for output
// processing. It is idempotent: the editor calls it before each line, so a
// terminal that a shell reset while kin chat was stopped is raw again.
func (t *tty) raw() error {
	tio := *t.saved
	tio.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	tio.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	tio.Cflag &^= unix.CSIZE | unix.PARENB
	tio.Cflag |= unix.CS8
	tio.Cc[unix.VMIN], tio.Cc[unix.VTIME] = 1, 0
	return unix.IoctlSetTermios(int(t.in.Fd()), ioctlSetTermios, &tio)
}

// restore gives the terminal back as it was.
func (t *tty) restore() {
	_ = unix.IoctlSetTermios(int(t.in.Fd()), ioctlSetTermios, t.saved)
}

// size is the terminal's width and height (80 by 24 when it does not say).
func (t *tty) size() (int, int) {
	w, h, err := term.GetSize(int(t.out.Fd()))
	if err != nil || w == 0 {
		return 80, 24
	}
	return w, h
}

// suspend is Ctrl-Z: the terminal as it was, the process stopped as a
// shell's job is; after fg, raw again. (kin serve runs in a process group
// of its own and goes on meanwhile; what it says waits.)
func (t *tty) suspend(before, after func()) {
	before()
	t.restore()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGCONT)
	defer stop()
	_ = syscall.Kill(os.Getpid(), syscall.SIGTSTP)
	<-ctx.Done()
	_ = t.raw()
	after()
}
