package chat

import (
	"io"
	"testing"
	"unicode/utf8"
)

// Ctrl-Z suspends kin chat; after fg the line being typed goes on as it
// was: nothing of the suspension reaches the editor as a key.
func TestSuspendLeavesTheLineAlone(t *testing.T) {
	in := newFeed()
	suspended := 0
	kr := &keyReader{out: in, suspend: func() { suspended++ }}
	kr.write([]byte("ab\x1acd"))
	in.close()
	raw, err := io.ReadAll(in)
	if err != nil {
		t.Fatal(err)
	}
	e := &editor{scr: newScreen(io.Discard, false)}
	var line []rune
	for _, r := range string(raw) {
		if k, ok := e.filter(r); ok {
			line = append(line, k)
		}
	}
	if suspended != 1 || string(line) != "abcd" {
		t.Errorf("after Ctrl-Z the editor got %q (suspended %d times), want \"abcd\"", string(line), suspended)
	}
}

// A lone Esc ends a read that takes it (a template's value) and no other:
// elsewhere it stays the Meta prefix, and a sequence (an arrow, Alt-b)
// read at once is never the Esc key.
func TestLoneEscape(t *testing.T) {
	for _, c := range []struct {
		takes  bool
		writes []string
		want   string
	}{
		{true, []string{"ab", "\x1b"}, "ab" + string(keyEscape)},
		{false, []string{"ab", "\x1b"}, "ab"}, // held: the next byte may make it Alt-x
		{false, []string{"\x1b", "b"}, "\x1bb"},
		{true, []string{"\x1b[A"}, "\x1b[A"},
		{true, []string{"\x1bb"}, "\x1bb"},
	} {
		in := newFeed()
		kr := &keyReader{out: in, escKey: func() bool { return c.takes }}
		for _, w := range c.writes {
			kr.write([]byte(w))
		}
		in.close()
		raw, _ := io.ReadAll(in)
		if string(raw) != c.want {
			t.Errorf("%q (Esc taken: %v): the editor got %q, want %q", c.writes, c.takes, raw, c.want)
		}
	}
}

// While the editor waits for the terminal to say where its cursor is, the
// feed gives it the report first and what was typed before it after (the
// editor gives up past 128K characters read while it waits), then the
// mark that the read's question was on screen, then what followed. A
// character split between two reads of the terminal, or two reads of the
// feed, stays whole (the report never lands inside it).
func TestCursorReportComesFirst(t *testing.T) {
	in := newFeed()
	cq := &cursorQuery{w: io.Discard, feed: in, seq: func() int { return 3 }}
	kr := &keyReader{out: in, answer: cq.answer}
	kr.write([]byte("early"))
	if _, err := cq.Write([]byte("\x1b[6n")); err != nil {
		t.Fatal(err)
	}
	kr.write([]byte("ab\xc3"))
	kr.write([]byte("\xa9\x1b[5;1Rcd"))
	kr.write([]byte("\x1b[7;1R")) // no query out: passed on as it is
	in.close()
	var got []byte
	buf := make([]byte, 4)
	for {
		n, err := in.Read(buf)
		if n > 0 && !utf8.RuneStart(buf[0]) {
			t.Errorf("a read began inside a character: %q", buf[:n])
		}
		got = append(got, buf[:n]...)
		if err != nil {
			break
		}
	}
	want := "\x1b[5;1R" + "earlyabé" + string(keyShown+3) + "cd" + "\x1b[7;1R"
	if string(got) != want {
		t.Errorf("the editor read %q, want %q", got, want)
	}
}

// A paste is text: the editor echoes it as it comes, so a C1 control in
// it (U+0080-U+009F as UTF-8, which xterm acts on: U+009B is CSI) would
// drive the terminal, and hide part of what is sent (a web page can put
// anything in what is copied from it). They are dropped, like C0 ones.
func TestPasteDropsC1Controls(t *testing.T) {
	in := newFeed()
	kr := &keyReader{out: in}
	kr.write([]byte("\x1b[200~a\u009b2Kb\xc2"))
	kr.write([]byte("\x9dc\u00e9\u00a0d\x1b[201~"))
	in.close()
	raw, _ := io.ReadAll(in)
	if string(raw) != "a2Kbc\u00e9\u00a0d" {
		t.Errorf("the editor got %q", raw)
	}
}
