package chat

import (
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// The line editor (github.com/ergochat/readline) reads its keys from a feed
// that kin chat fills: the terminal's bytes, translated by keyReader, and
// the UI's own requests, all in one order. Keys the editor has no name for,
// and the UI's requests, travel as runes of Unicode's private planes that
// the editor's input filter turns into its own actions (editor.filter).
const (
	keyInterrupt     rune = 0xF0000 + iota // Ctrl-C, handled in order with the keys typed before it
	keyNewline                             // Alt-Enter: this line goes on in the next one
	keyPasteNewline                        // a newline inside a paste: the same, and not kept in history
	keyDeleteWord                          // Alt-d, Ctrl-Delete
	keyBackspaceWord                       // Alt-Backspace
	keyEscape                              // a lone Esc, where the read under way takes it (keyReader.escKey)
	keyPasteJoin                           // inside a long line of a paste: the line goes on in the next read, joined without a newline

	// keyShown+seq: the terminal has shown read seq's question (it
	// answered the read's cursor query, cursorQuery); the keys before it
	// were typed before.
	keyShown rune = 0xF8000

	// keyCancel+seq ends read seq at once (its line is kept as a draft);
	// keyClear+seq empties it first. A request for a read that has ended
	// meanwhile is ignored.
	keyCancel rune = 0x100000
	keyClear  rune = 0x108000
	seqMask        = 0x7FFF
)

// feed is the editor's standard input: what was put, in order, read by
// the editor when it reads. put never blocks.
//
// While the editor waits for the terminal to say where its cursor is (a
// cursor query is out, cursorQuery), the feed is held: the editor reads
// the answer first (front), then what came before it. The editor keeps
// what it reads while it waits, and gives up (a panic that ends kin chat
// and leaves the terminal raw) past 128K characters; a terminal answers
// after whatever it was sending, a long paste above all, so without the
// hold a paste of more than that with a newline near its start crashed
// kin chat.
type feed struct {
	mu     sync.Mutex
	buf    []byte
	front  []byte // the terminal's answer to a cursor query: read before buf
	held   bool   // a cursor query is out: buf waits for its answer
	closed bool
	ready  chan struct{} // signalled when there is something to read or the feed closed
}

func newFeed() *feed { return &feed{ready: make(chan struct{}, 1)} }

func (f *feed) put(b []byte) {
	if len(b) == 0 {
		return
	}
	f.mu.Lock()
	f.buf = append(f.buf, b...)
	f.mu.Unlock()
	f.signal()
}

func (f *feed) putRunes(rs ...rune) {
	var b []byte
	for _, r := range rs {
		b = utf8.AppendRune(b, r)
	}
	f.put(b)
}

// hold keeps buf from the editor until answer.
func (f *feed) hold() {
	f.mu.Lock()
	f.held = true
	f.mu.Unlock()
}

// answer gives the editor the terminal's answer to its cursor query
// before anything queued, queues then after what is queued, and lets buf
// be read again.
func (f *feed) answer(cpr, then []byte) {
	f.mu.Lock()
	f.front = append(f.front, cpr...)
	f.buf = append(f.buf, then...)
	f.held = false
	f.mu.Unlock()
	f.signal()
}

func (f *feed) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.signal()
}

func (f *feed) signal() {
	select {
	case f.ready <- struct{}{}:
	default:
	}
}

func (f *feed) Read(p []byte) (int, error) {
	for {
		f.mu.Lock()
		from := &f.buf
		if len(f.front) > 0 {
			from = &f.front
		} else if f.held && !f.closed {
			from = nil
		}
		if from != nil && len(*from) > 0 {
			n := copy(p, *from)
			if n < len(*from) && !utf8.RuneStart((*from)[n]) {
				// Never end inside a character: a cursor report put in
				// front before the rest is read would split it.
				for k := n - 1; k > 0 && k >= n-utf8.UTFMax; k-- {
					if utf8.RuneStart((*from)[k]) {
						n = k
						break
					}
				}
			}
			*from = (*from)[n:]
			more := len(f.front) > 0 || len(f.buf) > 0
			f.mu.Unlock()
			if more {
				f.signal()
			}
			return n, nil
		}
		closed := f.closed
		f.mu.Unlock()
		if closed {
			return 0, io.EOF
		}
		<-f.ready
	}
}

// keyReader translates what the terminal sends into what the editor
// understands:
//   - Ctrl-C becomes keyInterrupt (the terminal is in raw mode, so it sends
//     no signal), Alt-Enter keyNewline, Alt-d and Ctrl-Delete
//     keyDeleteWord, Alt-Backspace keyBackspaceWord, Ctrl-Left and
//     Ctrl-Right the editor's word moves (Alt-b, Alt-f);
//   - a bracketed paste is text: its newlines become keyPasteNewline, so a
//     pasted stack trace is one question and not twenty, and no control
//     character in it acts as a key;
//   - everything else (arrows, Home, End, the terminal's cursor position
//     reports) passes through unchanged.
//
// It is fed the terminal's bytes as they come; a sequence split between
// two reads is kept until it is whole.
type keyReader struct {
	out     *feed
	suspend func() // Ctrl-Z, where the system has job control (nil: passed on)
	// interrupt takes a Ctrl-C typed while no line is being read (a
	// one-shot run's turn); it reports false when a line is, and the
	// Ctrl-C goes to the editor in order.
	interrupt func() bool
	// answer takes the terminal's report of where its cursor is, and
	// reports false when no query was out (the report goes on as keys).
	answer func(cpr []byte) bool
	cpr    []byte // a report just read, for write to hand to answer
	// escKey reports whether the read under way ends at a lone Esc (a
	// template's value, templates.go); elsewhere Esc stays the editor's
	// Meta prefix (Esc then b is Alt-b). nil: never.
	escKey func() bool

	esc []byte // an escape sequence being read
	// pasteCol counts the characters of the paste's line so far: a line
	// is handed to the editor pasteChunk characters at a time.
	pasteCol int
	c2       bool // the paste's last byte was 0xC2, which may start a C1 control
	// partial is the start of a character whose end the terminal has not
	// sent yet (a read ended inside it): it is put with its end, never
	// alone, so that a cursor report cannot come between them.
	partial []byte
	paste   bool
	cr      bool // in a paste, the last byte was a CR (a CRLF is one newline)
}

// sequences the editor does not know, by what follows ESC [.
var csiKeys = map[string][]byte{
	"1;5D": []byte("\x1bb"), // Ctrl-Left: a word back
	"1;5C": []byte("\x1bf"), // Ctrl-Right: a word on
	"3;5~": utf8.AppendRune(nil, keyDeleteWord),
}

func (k *keyReader) write(b []byte) {
	out := k.partial
	k.partial = nil
	flush := func() {
		k.out.put(out)
		out = nil
	}
	for _, c := range b {
		if k.paste {
			out = append(out, k.pasted(c)...)
			continue
		}
		if k.esc != nil {
			out = append(out, k.escape(c)...)
			if cpr := k.cpr; cpr != nil {
				// What came before the report is queued before it is
				// answered (answer queues a mark after it).
				k.cpr = nil
				flush()
				if k.answer == nil || !k.answer(cpr) {
					out = append(out, cpr...)
				}
			}
			continue
		}
		switch c {
		case 0x1b:
			k.esc = []byte{0x1b}
		case 0x03:
			if k.interrupt != nil && k.interrupt() {
				break
			}
			out = utf8.AppendRune(out, keyInterrupt)
		case 0x1a:
			if k.suspend == nil {
				out = append(out, c)
				break
			}
			flush()
			k.suspend() // it redraws the prompt and the line after fg
		default:
			out = append(out, c)
		}
	}
	if len(b) == 1 && b[0] == 0x1b && string(k.esc) == "\x1b" && k.escKey != nil && k.escKey() {
		// The Esc key alone: a terminal sends a sequence (an arrow, Alt-x)
		// in one write, so a read of ESC and nothing else is the key. (A
		// sequence split between two reads, over a slow link, would end
		// the read too: only reads that take Esc risk it.)
		k.esc = nil
		out = utf8.AppendRune(out, keyEscape)
	}
	for i := len(out) - 1; i >= 0 && i >= len(out)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(out[i]) {
			if !utf8.FullRune(out[i:]) {
				out, k.partial = out[:i], append([]byte(nil), out[i:]...)
			}
			break
		}
	}
	flush()
}

// escape takes one byte of an escape sequence and returns what to pass on
// once the sequence is whole.
func (k *keyReader) escape(c byte) []byte {
	k.esc = append(k.esc, c)
	s := k.esc
	if len(s) == 2 {
		switch c {
		case '[', 'O':
			return nil
		case '\r', '\n':
			k.esc = nil
			return utf8.AppendRune(nil, keyNewline)
		case 'd':
			k.esc = nil
			return utf8.AppendRune(nil, keyDeleteWord)
		case 0x7f, 0x08:
			k.esc = nil
			return utf8.AppendRune(nil, keyBackspaceWord)
		case 0x1b:
			// ESC ESC [ D is Alt-Left in some terminals; the editor reads it.
			k.esc = []byte{0x1b}
			return []byte{0x1b}
		}
		k.esc = nil
		return s
	}
	if s[1] == 'O' { // SS3: one byte follows
		k.esc = nil
		return s
	}
	if c >= 0x40 && c <= 0x7e { // the final byte of a CSI sequence
		k.esc = nil
		params := string(s[2 : len(s)-1])
		switch {
		case params == "200" && c == '~':
			k.paste, k.cr, k.pasteCol = true, false, 0
			return nil
		case params == "201" && c == '~':
			return nil
		}
		if r, ok := csiKeys[params+string(c)]; ok {
			return r
		}
		if c == 'R' && strings.Contains(params, ";") {
			k.cpr = append([]byte(nil), s...)
			return nil
		}
		return s
	}
	if len(s) > 32 { // not a sequence any terminal sends
		k.esc = nil
		return s
	}
	return nil
}

// pasted takes one byte of a paste.
func (k *keyReader) pasted(c byte) []byte {
	if k.c2 {
		// The editor echoes a paste as it comes: a C1 control in it
		// (U+0080-U+009F, which xterm acts on: U+009B is CSI) would
		// drive the terminal, and could hide part of what is sent (a
		// web page puts what it likes in what is copied from it).
		k.c2 = false
		if c >= 0x80 && c < 0xa0 {
			return nil
		}
		return append(k.char(0xc2), k.pasted(c)...)
	}
	if k.esc != nil || c == 0x1b {
		// Only the end of the paste is read as a sequence; any other is
		// dropped.
		if k.esc == nil {
			k.esc = []byte{}
		}
		k.esc = append(k.esc, c)
		const end = "\x1b[201~"
		if string(k.esc) == end[:len(k.esc)] {
			if len(k.esc) == len(end) {
				k.esc, k.paste = nil, false
			}
			return nil
		}
		k.esc = nil
		return nil
	}
	wasCR := k.cr
	k.cr = c == '\r'
	switch {
	case c == '\r':
		k.pasteCol = 0
		return utf8.AppendRune(nil, keyPasteNewline)
	case c == '\n':
		k.pasteCol = 0
		if wasCR {
			return nil
		}
		return utf8.AppendRune(nil, keyPasteNewline)
	case c < 0x20 && c != '\t' || c == 0x7f:
		return nil
	case c == 0xc2:
		k.c2 = true
		return nil
	}
	return k.char(c)
}

// char passes on a byte of a paste that is text.
func (k *keyReader) char(c byte) []byte {
	if !utf8.RuneStart(c) {
		return []byte{c}
	}
	// The editor does work in proportion to the line for every character
	// added (it copies the line for kin chat's listener, and measures all
	// of it for the right margin): a 40,000-character line of minified
	// code took it 25 s, during which kin chat answered nothing. Pasted
	// lines go to it in pieces, joined again without a newline.
	k.pasteCol++
	if k.pasteCol > pasteChunk {
		k.pasteCol = 1
		return append(utf8.AppendRune(nil, keyPasteJoin), c)
	}
	return []byte{c}
}

// pasteChunk is how many characters of a pasted line the editor takes in
// one read.
const pasteChunk = 1000

// cursorQuery is the editor's writer to the terminal. Before each prompt
// the editor asks the terminal where its cursor is (DSR 6) and waits for
// the answer; a terminal that never answers would leave it waiting (and
// the keys typed meanwhile piling up), so after a second without one the
// answer is made up: the first column, which is where kin chat always
// has the cursor when a prompt starts.
//
// The answer also says when the read's question reached the person: the
// terminal answers after it showed what was written before the query (an
// approval's block), and after the keys typed before that. So the answer
// is followed, in the feed, by keyShown and the read's number: keys before
// the mark were typed before the question was on screen (editor.filter).
type cursorQuery struct {
	w    io.Writer
	feed *feed
	seq  func() int // the read under way

	mu      sync.Mutex // guards waiting and asker
	waiting chan struct{}
	asker   int // the read whose query is out
}

func (c *cursorQuery) Write(b []byte) (int, error) {
	if strings.Contains(string(b), "\x1b[6n") {
		c.mu.Lock()
		if c.waiting == nil {
			done := make(chan struct{})
			c.waiting = done
			if c.seq != nil {
				c.asker = c.seq()
			}
			c.feed.hold()
			go func() {
				select {
				case <-done:
				case <-time.After(time.Second):
					c.answer([]byte("\x1b[1;1R"))
				}
			}()
		}
		c.mu.Unlock()
	}
	return c.w.Write(b)
}

// answer is the terminal's report of where its cursor is (cpr): the editor
// reads it first, then what was typed before it, then the mark. It reports
// false when no query was out.
func (c *cursorQuery) answer(cpr []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiting == nil {
		return false
	}
	close(c.waiting)
	c.waiting = nil
	c.feed.answer(cpr, utf8.AppendRune(nil, keyShown+rune(c.asker&seqMask)))
	return true
}
