package files

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Position is a place in a text as LSP counts it: a zero-based line and a
// zero-based offset in UTF-16 code units within that line. Lines end at
// "\n", "\r\n" or "\r". A character past the end of its line means the end
// of the line (LSP's rule); a line past the last one is an error.
type Position struct {
	Line      int
	Character int
}

// Range is the text from Start up to, not including, End.
type Range struct {
	Start, End Position
}

// TextChange is one of an editor's changes to a buffer: Text replaces
// Range, or the whole buffer when Range is nil.
type TextChange struct {
	Range *Range
	Text  string
}

// TextEdit is one of kin's edits to an editor's buffer.
type TextEdit struct {
	Range   Range
	NewText string
}

// offset returns the byte offset of pos in text.
func offset(text string, pos Position) (int, error) {
	if pos.Line < 0 || pos.Character < 0 {
		return 0, fmt.Errorf("position %d:%d is negative", pos.Line, pos.Character)
	}
	ls, err := lineStart(text, 0, 0, pos.Line)
	if err != nil {
		return 0, err
	}
	return inLine(text, ls, pos.Character), nil
}

// lineStart returns the byte offset where line starts, scanning from byte
// from, where line fromLine (<= line) starts. It runs in the read loop for
// every keystroke, so it first looks for "\n" alone, which strings.Count
// and strings.IndexByte do fast, and then for "\r" only in what that scan
// covered (not in the rest of the text, as it did): only a text with "\r"
// there is scanned again for both.
func lineStart(text string, from, fromLine, line int) (int, error) {
	start, err := scanLines(text, from, fromLine, line, false)
	covered := start
	if err != nil {
		covered = len(text)
	}
	if strings.IndexByte(text[from:covered], '\r') >= 0 {
		return scanLines(text, from, fromLine, line, true)
	}
	return start, err
}

// scanLines is lineStart's scan; cr says lines may also end at "\r".
func scanLines(text string, from, fromLine, line int, cr bool) (int, error) {
	start, l := from, fromLine
	if !cr {
		// Whole blocks first, while the line is past them: one
		// strings.Count per block costs much less than one IndexByte per
		// (short) line. start may then be inside line l.
		const block = 4 << 10
		for l < line && start+block <= len(text) {
			n := strings.Count(text[start:start+block], "\n")
			if l+n >= line {
				break
			}
			l, start = l+n, start+block
		}
	}
	for ; l < line; l++ {
		var i int
		if cr {
			i = strings.IndexAny(text[start:], "\r\n")
		} else {
			i = strings.IndexByte(text[start:], '\n')
		}
		if i < 0 {
			return 0, fmt.Errorf("line %d is past the end of the text (%d lines)", line, l+1)
		}
		start += i + 1
		if text[start-1] == '\r' && start < len(text) && text[start] == '\n' {
			start++
		}
	}
	return start, nil
}

// inLine returns the byte offset of the character-th UTF-16 unit of the
// line starting at ls (its end when the line is shorter).
func inLine(text string, ls, character int) int {
	off, units := ls, 0
	for off < len(text) && units < character {
		r, size := utf8.DecodeRuneInString(text[off:])
		if r == '\r' || r == '\n' {
			break // past the end of the line: the end of the line
		}
		n := 1
		if r >= 0x10000 {
			n = 2
		}
		if units+n > character {
			break // inside a surrogate pair: before the character
		}
		units += n
		off += size
	}
	return off
}

// rangeOffsets returns the byte offsets of r in text; the end is found
// from the start's line, not from the top.
func rangeOffsets(text string, r Range) (int, int, error) {
	s, e := r.Start, r.End
	if s.Line < 0 || s.Character < 0 || e.Line < 0 || e.Character < 0 {
		return 0, 0, fmt.Errorf("the range %d:%d-%d:%d has a negative position", s.Line, s.Character, e.Line, e.Character)
	}
	if e.Line < s.Line || (e.Line == s.Line && e.Character < s.Character) {
		return 0, 0, fmt.Errorf("the range ends (%d:%d) before it starts (%d:%d)", e.Line, e.Character, s.Line, s.Character)
	}
	ls, err := lineStart(text, 0, 0, s.Line)
	if err != nil {
		return 0, 0, err
	}
	le, err := lineStart(text, ls, s.Line, e.Line)
	if err != nil {
		return 0, 0, err
	}
	start, end := inLine(text, ls, s.Character), inLine(text, le, e.Character)
	if end < start { // both clamped on one line
		end = start
	}
	return start, end, nil
}

// positionOf returns the Position of byte offset off in text (off is at a
// character boundary, never between "\r" and "\n").
func positionOf(text string, off int) Position {
	var p Position
	lineStart := 0
	for i := 0; i < off; i++ {
		switch text[i] {
		case '\n':
			p.Line++
			lineStart = i + 1
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				continue // the "\n" ends the line
			}
			p.Line++
			lineStart = i + 1
		}
	}
	for _, r := range text[lineStart:off] {
		p.Character++
		if r >= 0x10000 {
			p.Character++
		}
	}
	return p
}

// apply applies an editor's changes to text, in order, each to the result
// of the one before (LSP's didChange semantics).
func apply(text string, changes []TextChange) (string, error) {
	for i, c := range changes {
		if c.Range == nil {
			text = c.Text
			continue
		}
		start, end, err := rangeOffsets(text, *c.Range)
		if err != nil {
			if len(changes) > 1 {
				return "", fmt.Errorf("change %d of %d: %v", i+1, len(changes), err)
			}
			return "", err
		}
		text = text[:start] + c.Text + text[end:]
	}
	return text, nil
}

// lineEdit returns one edit turning old into new that spans whole lines:
// the lines both share at the start and at the end are left alone, so the
// editor keeps its cursor, folds and marks there, and its undo step covers
// only what changed.
func lineEdit(old, new string) TextEdit {
	prefix := 0
	for n := min(len(old), len(new)); prefix < n && old[prefix] == new[prefix]; prefix++ {
	}
	// back to the start of the line (just after a "\n")
	for prefix > 0 && old[prefix-1] != '\n' {
		prefix--
	}
	suffix := 0
	for n := min(len(old), len(new)) - prefix; suffix < n && old[len(old)-1-suffix] == new[len(new)-1-suffix]; suffix++ {
	}
	// forward to the start of a line (just after a "\n"), or the end
	for suffix > 0 && len(old)-suffix > prefix && old[len(old)-suffix-1] != '\n' {
		suffix--
	}
	return TextEdit{
		Range:   Range{Start: positionOf(old, prefix), End: positionOf(old, len(old)-suffix)},
		NewText: new[prefix : len(new)-suffix],
	}
}
