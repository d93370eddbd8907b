package files

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf16"
)

func TestOffsetCountsUTF16(t *testing.T) {
	// é is 2 bytes and 1 unit, 世 3 bytes and 1 unit, 😀 4 bytes and 2 units.
	text := "aé世😀b\r\nx\ry\nlast"
	tests := []struct {
		pos  Position
		want int
	}{
		{Position{0, 0}, 0},
		{Position{0, 1}, 1},           // after a
		{Position{0, 2}, 3},           // after é
		{Position{0, 3}, 6},           // after 世
		{Position{0, 4}, 6},           // inside 😀's surrogate pair: before it
		{Position{0, 5}, 10},          // after 😀
		{Position{0, 6}, 11},          // after b
		{Position{0, 99}, 11},         // past the end of the line: its end
		{Position{1, 0}, 13},          // after \r\n
		{Position{1, 5}, 14},          // x's line ends at \r
		{Position{2, 0}, 15},          // after a lone \r
		{Position{3, 0}, 17},          // after \n
		{Position{3, 4}, len(text)},   // the end
		{Position{3, 100}, len(text)}, // clamped
		{Position{Line: 1, Character: 1}, 14},
	}
	for _, tc := range tests {
		got, err := offset(text, tc.pos)
		if err != nil || got != tc.want {
			t.Errorf("offset(%v) = %d, %v; want %d", tc.pos, got, err, tc.want)
		}
	}
	if _, err := offset(text, Position{4, 0}); err == nil || !strings.Contains(err.Error(), "line 4 is past the end of the text (4 lines)") {
		t.Errorf("line past the end: %v", err)
	}
	if _, err := offset("a\n", Position{1, 0}); err != nil {
		t.Errorf("the empty line after a final newline exists: %v", err)
	}
	if _, err := offset("a", Position{-1, 0}); err == nil {
		t.Error("a negative line was accepted")
	}
}

// TestOffsetInALongText covers texts of many blocks of lookup (lines
// shorter and longer than a block, "\r" only late in the text or not at
// all): every line's start, found through offset, is where positionOf
// says it is, and a range spanning blocks comes out whole.
func TestOffsetInALongText(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	var b strings.Builder
	for i := range 1200 {
		n := r.Intn(80)
		if i%300 == 7 {
			n = 9000 // longer than a block
		}
		b.WriteString(strings.Repeat("é", n/2) + "\n")
	}
	plain := b.String()
	for name, text := range map[string]string{"no \\r": plain, "\\r late": plain + "x\r\ny\rz\n" + plain[:5000]} {
		var starts []int
		for off := 0; off <= len(text); off++ {
			if off == 0 || text[off-1] == '\n' || (text[off-1] == '\r' && (off == len(text) || text[off] != '\n')) {
				starts = append(starts, off)
			}
		}
		for line, want := range starts {
			got, err := offset(text, Position{Line: line})
			if err != nil || got != want || positionOf(text, want) != (Position{Line: line}) {
				t.Fatalf("%s: offset(line %d) = %d, %v; want %d", name, line, got, err, want)
			}
		}
		if _, err := offset(text, Position{Line: len(starts)}); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("(%d lines)", len(starts))) {
			t.Errorf("%s: line past the end: %v", name, err)
		}
		s, e, err := rangeOffsets(text, Range{Start: Position{Line: 10}, End: Position{Line: len(starts) - 2}})
		if err != nil || s != starts[10] || e != starts[len(starts)-2] {
			t.Errorf("%s: range = %d-%d, %v; want %d-%d", name, s, e, err, starts[10], starts[len(starts)-2])
		}
	}
}

// utf16Offset is a second, independent way to find a position: through the
// text as UTF-16 code units.
func utf16Position(text string, off int) Position {
	u := utf16.Encode([]rune(text[:off]))
	var p Position
	for i := 0; i < len(u); i++ {
		switch {
		case u[i] == '\r' && i+1 < len(u) && u[i+1] == '\n':
			// the \n ends the line
		case u[i] == '\n' || u[i] == '\r':
			p.Line++
			p.Character = 0
		default:
			p.Character++
		}
	}
	return p
}

func TestPositionOfMatchesUTF16(t *testing.T) {
	text := "aé世😀b\r\nx\ry\n😀😀\n"
	for off := 0; off <= len(text); off++ {
		if off > 0 && off < len(text) && (text[off]&0xC0 == 0x80 || (text[off-1] == '\r' && text[off] == '\n')) {
			continue // not a character boundary
		}
		got, want := positionOf(text, off), utf16Position(text, off)
		if got != want {
			t.Errorf("positionOf(%d) = %v, want %v", off, got, want)
		}
		back, err := offset(text, got)
		if err != nil || back != off {
			t.Errorf("offset(positionOf(%d)) = %d, %v", off, back, err)
		}
	}
}

func TestApplyIncrementalChanges(t *testing.T) {
	text := "héllo 😀 world\nsecond\n"
	got, err := apply(text, []TextChange{
		// replace 😀 (units 6-8 on line 0) with 世界
		{Range: &Range{Start: Position{0, 6}, End: Position{0, 8}}, Text: "世界"},
		// then, in the result, insert at the start of line 1
		{Range: &Range{Start: Position{1, 0}, End: Position{1, 0}}, Text: "a "},
		// delete "world" (after 世界 the line is "héllo 世界 world": units 9-14)
		{Range: &Range{Start: Position{0, 9}, End: Position{0, 14}}, Text: "mundo"},
	})
	if err != nil || got != "héllo 世界 mundo\na second\n" {
		t.Fatalf("got %q, %v", got, err)
	}
	got, err = apply(text, []TextChange{{Text: "all new"}, {Range: &Range{Start: Position{0, 3}, End: Position{0, 3}}, Text: "!"}})
	if err != nil || got != "all! new" {
		t.Fatalf("full then incremental: %q, %v", got, err)
	}
	if _, err := apply(text, []TextChange{{Range: &Range{Start: Position{0, 4}, End: Position{0, 2}}}}); err == nil || !strings.Contains(err.Error(), "ends (0:2) before it starts (0:4)") {
		t.Errorf("reversed range: %v", err)
	}
	if _, err := apply(text, []TextChange{{Text: "x"}, {Range: &Range{Start: Position{5, 0}, End: Position{5, 0}}}}); err == nil || !strings.Contains(err.Error(), "change 2 of 2") {
		t.Errorf("bad second change: %v", err)
	}
}

func TestLineEditTurnsOldIntoNew(t *testing.T) {
	tests := []struct{ old, new string }{
		{"package main\n\nfunc main() {}\n", "package main\n\nfunc main() { run() }\n"},
		{"a\nb\nc\n", "a\nb\nc\nd\n"},
		{"a\nb\nc", "a\nb\nc!"},
		{"", "new\n"},
		{"old\n", ""},
		{"same\n", "same\n"},
		{"x😀\r\ny\r\n", "x😀\r\nz\r\n"},
		{"a\rb\rc", "a\rB\rc"},
		{"l1\nl2\nl3\nl4\n", "l1\nL2\nl3\nL4\n"},
	}
	for _, tc := range tests {
		e := lineEdit(tc.old, tc.new)
		got, err := apply(tc.old, []TextChange{{Range: &e.Range, Text: e.NewText}})
		if err != nil || got != tc.new {
			t.Errorf("lineEdit(%q, %q) = %+v gives %q, %v", tc.old, tc.new, e, got, err)
		}
		if e.Range.Start.Character != 0 {
			t.Errorf("lineEdit(%q, %q) starts inside a line: %+v", tc.old, tc.new, e)
		}
	}
	// Only the changed line is replaced.
	e := lineEdit("a\nb\nc\n", "a\nB\nc\n")
	if e.Range != (Range{Position{1, 0}, Position{2, 0}}) || e.NewText != "B\n" {
		t.Errorf("one changed line: %+v", e)
	}
}

func TestLineEditRandom(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	pieces := []string{"a", "é", "世", "😀", "\n", "\r\n", "\r", " "}
	gen := func() string {
		var b strings.Builder
		for range r.Intn(12) {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		return b.String()
	}
	for range 3000 {
		old, new := gen(), gen()
		e := lineEdit(old, new)
		got, err := apply(old, []TextChange{{Range: &e.Range, Text: e.NewText}})
		if err != nil || got != new {
			t.Fatalf("lineEdit(%q, %q) = %+v gives %q, %v", old, new, e, got, err)
		}
	}
}
