package chat

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/visible"
)

// ANSI colours, used only when the output is a terminal.
const (
	cReset  = "\x1b[0m"
	cBold   = "\x1b[1m"
	cDim    = "\x1b[2m"
	cRed    = "\x1b[31m"
	cGreen  = "\x1b[32m"
	cYellow = "\x1b[33m"
	cCyan   = "\x1b[36m"
)

// screen is the line-oriented output. Only the UI goroutine writes to it.
// It knows whether the cursor is at the start of a line and what is being
// streamed, so that a tool line or an approval never lands in the middle of
// an answer.
type screen struct {
	w     io.Writer
	color bool

	col0      bool   // the cursor is at the start of a line
	mode      string // what the current partial line belongs to
	prompting bool   // a prompt is displayed and waits for input

	// With the line editor, its prompt and the line being typed stay
	// below the output: w is the editor's writer, which takes them away,
	// writes, and draws them again. So that they never share a row with
	// the output, every write ends at the start of a row; an unfinished
	// row (an answer streaming) is noted, and the next write goes back up
	// to its end and goes on from there.
	live          bool
	width, height func() int

	mu      sync.Mutex // with live: held while writing, and by the editor to note a typed line
	open    bool       // the last row of output is unfinished
	openCol int        // the column where it ends (width: it filled its row)
	openW   int        // the width it was drawn at
	cut     bool       // a typed line was echoed below an unfinished row
	// The last thing written, when it was a block (a plan): its id and
	// how many rows it took at width blockW. The next block of that id
	// is drawn over it.
	block       string
	blockRows   int
	blockW      int
	blockWrites bool // a block is being written

	// A stream whose mode starts with "fold:" (the model's reasoning) is
	// folded when it ends, with the line editor: its rows are replaced by
	// summarize's one line (at most width columns), while it is all still
	// on screen as written.
	summarize  func(text string, width int) string
	foldMode   string
	foldText   strings.Builder
	foldW      int
	foldWrites bool // the fold stream is being written
	foldBroken bool // something else was written, or a typed line cut it
}

func newScreen(w io.Writer, color bool) *screen {
	return &screen{w: w, color: color, col0: true}
}

func (s *screen) write(str string) {
	if str == "" {
		return
	}
	s.col0 = strings.HasSuffix(str, "\n")
	if !s.live {
		_, _ = io.WriteString(s.w, str)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.blockWrites {
		s.block = ""
	}
	if !s.foldWrites {
		s.foldBroken = true
	}
	var b strings.Builder
	w := s.width()
	col := 0
	if s.open {
		switch {
		case str[0] == '\n':
			// The row ends here, and on screen it has already ended.
			str = str[1:]
			s.open = false
		case w != s.openW:
			// The terminal was resized: the row may be anywhere now.
			s.open = false
		case s.openCol < w:
			fmt.Fprintf(&b, "\x1b[1A\x1b[%dG", s.openCol+1)
			col = s.openCol
		default:
			// The row is full: what follows starts the next one, where
			// the cursor is.
		}
	}
	if str == "" {
		return
	}
	b.WriteString(str)
	if i := strings.LastIndexByte(str, '\n'); i >= 0 {
		col, str = 0, str[i+1:]
	}
	if str == "" {
		s.open = false
	} else {
		s.open, s.openCol, s.openW = true, advance(col, str, w), w
		b.WriteString("\n")
	}
	_, _ = io.WriteString(s.w, b.String())
}

// echoed is the editor's: a line typed at its prompt was just echoed with
// its newline, below any unfinished row of output.
func (s *screen) echoed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open {
		s.open, s.cut = false, true
	}
	s.block = ""
	s.foldBroken = true
}

// replace shows lines as the block id: with the line editor, in place of
// the block of that id when it is the last thing on screen and all of it
// still is (a plan that changes stays one checklist); else below.
func (s *screen) replace(id string, lines []string) {
	s.endLine()
	text := strings.Join(lines, "\n") + "\n"
	if !s.live {
		s.write(text)
		return
	}
	s.mu.Lock()
	w, h := s.width(), s.height()
	if s.block == id && s.blockW == w && s.blockRows > 0 && s.blockRows < h-2 {
		text = fmt.Sprintf("\x1b[%dA\r\x1b[J", s.blockRows) + text
	}
	rows := 0
	for _, l := range lines {
		rows += rowsOf(l, w)
	}
	s.blockWrites = true
	s.mu.Unlock()
	s.write(text)
	s.mu.Lock()
	s.blockWrites = false
	s.block, s.blockRows, s.blockW = id, rows, w
	s.mu.Unlock()
}

// rowsOf is how many rows a line (no newline) takes, w columns wide.
func rowsOf(line string, w int) int {
	rows, col := 1, 0
	for _, r := range stripSGR(line) {
		if r == '\t' {
			// A tab stops at the last column and never wraps: counted as
			// a wrap, tabs made a redraw in place (a plan, a folded
			// thought) move up over, and erase, lines that were not its.
			if col < w {
				col = min(w-1, (col/8+1)*8)
			}
			continue
		}
		n := runeWidth(r)
		if col+n > w {
			rows, col = rows+1, 0
		}
		col += n
	}
	return rows
}

// sideWriter writes, from any goroutine, what does not go through the
// screen (--rpc's lines on standard error, the same terminal) above the
// line editor's prompt: an unfinished row is left as it is and the next
// output starts below.
type sideWriter struct {
	s *screen
	w io.Writer
}

func (sw sideWriter) Write(b []byte) (int, error) {
	sw.s.mu.Lock()
	defer sw.s.mu.Unlock()
	if sw.s.open {
		sw.s.open, sw.s.cut = false, true
	}
	sw.s.block, sw.s.foldBroken = "", true
	return sw.w.Write(b)
}

// settle takes in what the editor did: an unfinished row that a typed line
// cut is finished.
func (s *screen) settle() {
	if !s.live {
		return
	}
	s.mu.Lock()
	cut := s.cut
	s.cut = false
	s.mu.Unlock()
	if cut {
		s.col0, s.mode = true, ""
	}
}

// advance is the column after text written from col on a terminal w
// columns wide (w when the text fills the row to its last column). It
// counts as the terminal and the line editor do: wide East Asian
// characters take two columns, marks and format characters none, SGR
// colour sequences nothing, a tab goes to the next multiple of 8.
func advance(col int, text string, w int) int {
	esc := false
	for _, r := range text {
		switch {
		case esc:
			esc = r < 0x40 || r > 0x7e || r == '['
			continue
		case r == 0x1b:
			esc = true
			continue
		case r == '\t':
			if col >= w {
				col = 0
			}
			col = min(w, (col/8+1)*8)
			continue
		}
		n := runeWidth(r)
		if n == 0 {
			continue
		}
		if col+n > w {
			col = 0
		}
		col += n
	}
	return col
}

// stripSGR drops escape sequences (kin chat's own colours) from s.
func stripSGR(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	var b strings.Builder
	esc := false
	for _, r := range s {
		switch {
		case esc:
			esc = r < 0x40 || r > 0x7e || r == '['
		case r == 0x1b:
			esc = true
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// runeWidth is how many columns a terminal gives r. Where terminals
// differ it errs low: kin chat goes up as many rows as it counts to redraw
// a plan or fold the reasoning, and the words are the model's, so a count
// too high erased kin chat's own lines above them (which command ran). So
// Hangul's medial vowels and final consonants, which join the syllable
// before them (no column in xterm's wcwidth, glibc, VTE), count none.
func runeWidth(r rune) int {
	if unicode.In(r, unicode.Mn, unicode.Me, unicode.Cc, unicode.Cf) ||
		(r >= 0x1160 && r <= 0x11ff) || (r >= 0xd7b0 && r <= 0xd7ff) {
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// endLine finishes a partial line (a streamed answer, a prompt).
func (s *screen) endLine() {
	s.settle()
	if !s.col0 {
		s.foldWrites = s.foldMode != "" && s.mode == s.foldMode
		s.write("\n")
		s.foldWrites = false
	}
	if s.foldMode != "" {
		s.fold()
	}
	s.mode = ""
	s.prompting = false
}

// fold replaces the fold stream that just ended with its summary.
func (s *screen) fold() {
	text := strings.TrimRight(s.foldText.String(), "\n")
	s.foldMode = ""
	s.foldText.Reset()
	if s.summarize == nil || text == "" {
		return
	}
	s.mu.Lock()
	w, h := s.width(), s.height()
	ok := !s.foldBroken && w == s.foldW
	s.mu.Unlock()
	rows := 0
	for _, l := range strings.Split(text, "\n") {
		rows += rowsOf(l, w)
	}
	if !ok || rows < 2 || rows >= h-2 {
		return
	}
	s.write(fmt.Sprintf("\x1b[%dA\r\x1b[J", rows) + s.summarize(stripSGR(text), w) + "\n")
}

// line prints one or more whole lines.
func (s *screen) line(str string) {
	s.endLine()
	s.write(str + "\n")
}

func (s *screen) linef(format string, args ...any) { s.line(fmt.Sprintf(format, args...)) }

// blank ends the current line and prints an empty one.
func (s *screen) blank() {
	s.endLine()
	s.write("\n")
}

// prompt shows a question and leaves the cursor after it.
func (s *screen) prompt(str string) {
	s.endLine()
	s.write(str)
	s.mode = "prompt"
	s.prompting = true
}

// afterInput records that the terminal echoed the person's line and its
// newline.
func (s *screen) afterInput() {
	s.col0, s.mode, s.prompting = true, "", false
}

// stream appends text to a running stream (an answer, a command's output).
// A new stream starts on its own line with prefix; with indent, every line
// of it is indented.
func (s *screen) stream(mode, prefix, indent, text string) {
	if text == "" {
		return
	}
	s.settle()
	if s.mode != mode {
		s.endLine()
		s.mode = mode
		if s.live && strings.HasPrefix(mode, "fold:") {
			s.foldMode, s.foldW = mode, s.width()
			s.foldText.Reset()
			s.mu.Lock()
			s.foldBroken = false
			s.mu.Unlock()
		}
		s.foldWrite(prefix)
	}
	if indent == "" {
		s.foldWrite(text)
		return
	}
	for text != "" {
		if s.col0 {
			s.write(indent)
		}
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			s.write(text)
			return
		}
		s.write(text[:i+1])
		text = text[i+1:]
	}
}

// foldWrite writes a piece of the current stream, kept when it folds.
func (s *screen) foldWrite(str string) {
	if s.foldMode == "" || s.mode != s.foldMode {
		s.write(str)
		return
	}
	s.foldText.WriteString(str)
	s.foldWrites = true
	s.write(str)
	s.foldWrites = false
}

func (s *screen) paint(code, text string) string {
	if !s.color || text == "" {
		return text
	}
	return code + text + cReset
}

func (s *screen) bold(t string) string   { return s.paint(cBold, t) }
func (s *screen) dim(t string) string    { return s.paint(cDim, t) }
func (s *screen) red(t string) string    { return s.paint(cRed, t) }
func (s *screen) green(t string) string  { return s.paint(cGreen, t) }
func (s *screen) yellow(t string) string { return s.paint(cYellow, t) }
func (s *screen) cyan(t string) string   { return s.paint(cCyan, t) }

// status colours a tool-call or turn status.
func (s *screen) status(st string) string {
	switch st {
	case "completed", "connected":
		return s.green(st)
	case "failed", "denied", "unavailable":
		return s.red(st)
	case "unknown", "output_limit", "cancelled", "limit", "needs_login", "awaiting_trust":
		return s.yellow(st)
	}
	return st
}

// indented prints text as indented lines, at most max of them.
func (s *screen) indented(text string, max int) {
	text = strings.TrimRight(clean(text), "\n")
	if text == "" {
		return
	}
	lines := strings.Split(text, "\n")
	more := 0
	if max > 0 && len(lines) > max {
		more = len(lines) - max
		lines = lines[:max]
	}
	for _, l := range lines {
		s.line("    " + l)
	}
	if more > 0 {
		s.line(s.dim(fmt.Sprintf("    … %d more lines", more)))
	}
}

// diff prints a unified diff, coloured on a terminal, its tabs as spaces.
func (s *screen) diff(unified string) {
	for _, l := range strings.Split(strings.TrimRight(expandTabs(clean(unified), 0), "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			s.line(s.bold(l))
		case strings.HasPrefix(l, "+"):
			s.line(s.green(l))
		case strings.HasPrefix(l, "-"):
			s.line(s.red(l))
		case strings.HasPrefix(l, "@@"):
			s.line(s.cyan(l))
		default:
			s.line(l)
		}
	}
}

// clean makes text from the model, a tool or an MCP server safe to print:
// newlines and tabs stay, every other control character (escape sequences,
// carriage returns that would overwrite a line, bidirectional overrides) is
// shown escaped instead of acted on by the terminal.
func clean(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	ok := true
	for _, r := range s {
		if unsafeRune(r) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unsafeRune(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// expandTabs turns the tabs of text written from column col into the
// spaces a terminal would move over (to the next multiple of 8). A tab is
// never written where what follows must be seen whole: a terminal's tab
// stops at the last column and does not wrap, so each character after
// tabs that reach the margin is drawn over the one before, and an
// approval showed "echo hello" of "echo hello<tabs>;<tab>.<tab>z<tab> ".
// Spaces wrap like any text.
func expandTabs(text string, col int) string {
	if !strings.Contains(text, "\t") {
		return text
	}
	var b strings.Builder
	for _, r := range text {
		switch r {
		case '\t':
			n := 8 - col%8
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		case '\n':
			col = 0
		default:
			col += runeWidth(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// cleanLine is clean for text that must stay on one line.
func cleanLine(s string) string {
	return strings.ReplaceAll(clean(s), "\n", `\n`)
}

// unsafeRune says whether r is shown escaped, never acted on or drawn as
// nothing: the characters kin's approvals escape (visible.Hidden: controls,
// C1, bidi overrides, zero-width and other invisible format characters,
// tag characters), one list for every front end. kin chat kept a shorter
// one of its own, and a zero-width space or tag characters in an approved
// command showed as nothing.
func unsafeRune(r rune) bool { return r != utf8.RuneError && visible.Hidden(r) }

// displayURL shows a URL without its credentials (boundary.MaskURL).
func displayURL(raw string) string {
	return cleanLine(boundary.MaskURL(raw))
}
