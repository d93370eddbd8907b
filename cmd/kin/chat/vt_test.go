package chat_test

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// vt is the terminal the pty tests look at: a screen of w columns with
// everything that scrolled off kept above it, and a cursor, driven by the
// bytes kin chat writes. It implements the part of xterm that kin chat
// and its line editor use (printing with autowrap and the pending-wrap
// column, CR, LF, BS, TAB, cursor moves, erasing, SGR colours ignored; a
// character takes one column, but for Hangul's medial and final jamo,
// which take none) and
// answers the cursor position report (DSR 6) as a terminal does. A sequence
// it does not know is recorded, so a test fails rather than reads a screen
// that a real terminal would not show.
type vt struct {
	mu      sync.Mutex
	w, h    int
	rows    [][]rune // scrollback, then the screen: rows[len-h:] are on screen
	x, y    int      // cursor; y counts from the screen's first row
	pending bool     // the cursor sits past the last column: the next character wraps
	esc     []byte   // an escape sequence being read
	partial []byte   // the start of a UTF-8 character split between writes
	reply   []byte   // what the terminal answers (cursor position reports)
	unknown []string
	changed chan struct{}
}

func newVT(w, h int) *vt {
	v := &vt{w: w, h: h, changed: make(chan struct{})}
	for range h {
		v.rows = append(v.rows, v.blank())
	}
	return v
}

func (v *vt) blank() []rune { return []rune(strings.Repeat(" ", v.w)) }

// screenRow is the index in rows of screen row y.
func (v *vt) screenRow(y int) int { return len(v.rows) - v.h + y }

// Write feeds output to the terminal.
func (v *vt) Write(b []byte) (int, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	data := append(v.partial, b...)
	v.partial = nil
	for len(data) > 0 {
		if v.esc != nil {
			v.escByte(data[0])
			data = data[1:]
			continue
		}
		r, n := utf8.DecodeRune(data)
		if r == utf8.RuneError && n == 1 && !utf8.FullRune(data) {
			v.partial = append([]byte(nil), data...)
			break
		}
		data = data[n:]
		v.char(r)
	}
	close(v.changed)
	v.changed = make(chan struct{})
	return len(b), nil
}

// next is closed at the next write.
func (v *vt) next() <-chan struct{} {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.changed
}

// takeReply returns what the terminal has to answer.
func (v *vt) takeReply() []byte {
	v.mu.Lock()
	defer v.mu.Unlock()
	r := v.reply
	v.reply = nil
	return r
}

func (v *vt) char(r rune) {
	switch r {
	case 0x1b:
		v.esc = []byte{}
	case '\r':
		v.x, v.pending = 0, false
	case '\n':
		v.lineFeed()
		v.pending = false
	case '\b':
		if v.x > 0 && !v.pending {
			v.x--
		}
		v.pending = false
	case '\t':
		v.x = min(v.w-1, (v.x/8+1)*8)
		v.pending = false
	case '\a':
	default:
		if r < 0x20 || r == 0x7f {
			v.unknown = append(v.unknown, fmt.Sprintf("control %#x", r))
			return
		}
		if r >= 0x1160 && r <= 0x11ff {
			// Hangul medial vowels and final consonants join the syllable
			// before them: no column of their own (xterm's wcwidth, glibc,
			// VTE).
			return
		}
		if v.pending {
			v.x, v.pending = 0, false
			v.lineFeed()
		}
		v.rows[v.screenRow(v.y)][v.x] = r
		if v.x == v.w-1 {
			v.pending = true
		} else {
			v.x++
		}
	}
}

func (v *vt) lineFeed() {
	if v.y < v.h-1 {
		v.y++
		return
	}
	v.rows = append(v.rows, v.blank()) // the top row scrolls into the scrollback
}

func (v *vt) escByte(c byte) {
	v.esc = append(v.esc, c)
	s := v.esc
	if len(s) == 1 {
		if c != '[' {
			v.unknown = append(v.unknown, "ESC "+strconv.QuoteRune(rune(c)))
			v.esc = nil
		}
		return
	}
	if c < 0x40 || c > 0x7e { // parameters and intermediates
		if len(s) > 32 {
			v.unknown = append(v.unknown, "long CSI "+strconv.Quote(string(s)))
			v.esc = nil
		}
		return
	}
	v.esc = nil
	v.csi(string(s[1:len(s)-1]), c)
}

func (v *vt) csi(params string, final byte) {
	if strings.HasPrefix(params, "?") {
		if final == 'h' || final == 'l' {
			return // private modes: bracketed paste, cursor visibility
		}
		v.unknown = append(v.unknown, "CSI "+params+string(final))
		return
	}
	var args []int
	for _, p := range strings.Split(params, ";") {
		n, _ := strconv.Atoi(p)
		args = append(args, n)
	}
	arg := func(i, def int) int {
		if i < len(args) && args[i] > 0 {
			return args[i]
		}
		return def
	}
	v.pending = v.pending && final == 'm'
	switch final {
	case 'm':
	case 'A':
		v.y = max(0, v.y-arg(0, 1))
	case 'B':
		v.y = min(v.h-1, v.y+arg(0, 1))
	case 'C':
		v.x = min(v.w-1, v.x+arg(0, 1))
	case 'D':
		v.x = max(0, v.x-arg(0, 1))
	case 'G':
		v.x = min(v.w-1, arg(0, 1)-1)
	case 'H', 'f':
		v.y, v.x = min(v.h-1, arg(0, 1)-1), min(v.w-1, arg(1, 1)-1)
	case 'J':
		switch arg(0, 0) {
		case 0:
			v.eraseLine(v.y, v.x)
			for y := v.y + 1; y < v.h; y++ {
				v.eraseLine(y, 0)
			}
		case 2:
			for y := range v.h {
				v.eraseLine(y, 0)
			}
		default:
			v.unknown = append(v.unknown, "CSI "+params+"J")
		}
	case 'K':
		switch arg(0, 0) {
		case 0:
			v.eraseLine(v.y, v.x)
		case 2:
			v.eraseLine(v.y, 0)
		default:
			v.unknown = append(v.unknown, "CSI "+params+"K")
		}
	case 'n':
		if arg(0, 0) == 6 {
			v.reply = fmt.Appendf(v.reply, "\x1b[%d;%dR", v.y+1, v.x+1)
		}
	default:
		v.unknown = append(v.unknown, "CSI "+params+string(final))
	}
}

func (v *vt) eraseLine(y, from int) {
	row := v.rows[v.screenRow(y)]
	for i := from; i < len(row); i++ {
		row[i] = ' '
	}
}

// Text is everything shown, scrollback included, one line a row, trailing
// blanks dropped except those before the cursor (a prompt's last space).
func (v *vt) Text() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	lines := make([]string, len(v.rows))
	cursor := v.screenRow(v.y)
	for i, r := range v.rows {
		lines[i] = strings.TrimRight(string(r), " ")
		if i == cursor && len([]rune(lines[i])) < v.x {
			lines[i] = string(r[:v.x])
		}
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// Cursor is the cursor's row (0 at the top of the screen) and column.
func (v *vt) Cursor() (row, col int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.y, v.x
}

// Row is one screen row, trailing blanks dropped.
func (v *vt) Row(y int) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return strings.TrimRight(string(v.rows[v.screenRow(y)]), " ")
}

func (v *vt) Unknown() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.unknown...)
}
