package chat

import (
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
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
}

func newScreen(w io.Writer, color bool) *screen {
	return &screen{w: w, color: color, col0: true}
}

func (s *screen) write(str string) {
	if str == "" {
		return
	}
	_, _ = io.WriteString(s.w, str)
	s.col0 = strings.HasSuffix(str, "\n")
}

// endLine finishes a partial line (a streamed answer, a prompt).
func (s *screen) endLine() {
	if !s.col0 {
		s.write("\n")
	}
	s.mode = ""
	s.prompting = false
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
	if s.mode != mode {
		s.endLine()
		s.mode = mode
		s.write(prefix)
	}
	if indent == "" {
		s.write(text)
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

// diff prints a unified diff, coloured on a terminal.
func (s *screen) diff(unified string) {
	for _, l := range strings.Split(strings.TrimRight(clean(unified), "\n"), "\n") {
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

// cleanLine is clean for text that must stay on one line.
func cleanLine(s string) string {
	return strings.ReplaceAll(clean(s), "\n", `\n`)
}

func unsafeRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f:
		return true
	}
	return false
}

// displayURL drops credentials and query values from a URL before it is shown.
func displayURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return cleanLine(raw)
	}
	u.User = nil
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"…"}
		}
		u.RawQuery = q.Encode()
	}
	return cleanLine(u.String())
}
