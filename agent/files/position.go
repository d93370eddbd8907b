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
	start := 0
	for line := 0; line < pos.Line; line++ {
		i := strings.IndexAny(text[start:], "\r\n")
		if i < 0 {
			return 0, fmt.Errorf("line %d is past the end of the text (%d lines)", pos.Line, line+1)
		}
		start += i + 1
		if text[start-1] == '\r' && start < len(text) && text[start] == '\n' {
			start++
		}
	}
	off, units := start, 0
	for off < len(text) && units < pos.Character {
		r, size := utf8.DecodeRuneInString(text[off:])
		if r == '\r' || r == '\n' {
			break // past the end of the line: the end of the line
		}
		n := 1
		if r >= 0x10000 {
			n = 2
		}
		if units+n > pos.Character {
			break // inside a surrogate pair: before the character
		}
		units += n
		off += size
	}
	return off, nil
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
		start, err := offset(text, c.Range.Start)
		if err == nil {
			var end int
			if end, err = offset(text, c.Range.End); err == nil && end < start {
				err = fmt.Errorf("the range ends (%d:%d) before it starts (%d:%d)", c.Range.End.Line, c.Range.End.Character, c.Range.Start.Line, c.Range.Start.Character)
			}
			if err == nil {
				text = text[:start] + c.Text + text[end:]
				continue
			}
		}
		if len(changes) > 1 {
			return "", fmt.Errorf("change %d of %d: %v", i+1, len(changes), err)
		}
		return "", err
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
