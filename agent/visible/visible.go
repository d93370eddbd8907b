// Package visible makes text safe to show a person. It knows the characters
// that render as nothing or rearrange the text around them: zero-width
// characters, bidi controls (U+202E turns "invoice_\u202egpj.exe" into
// "invoice_exe.jpg" on screen), other format characters, control characters,
// line and paragraph separators, and bytes that are not UTF-8. Escape spells
// them out for what a person must read before deciding (approvals); Strip
// removes them from text kin passes on (tool descriptions).
//
// It is a leaf used by agent and mcp alike. It must never change text that
// has none of these characters, and never be used on what runs or is
// written: only on what is shown or described.
package visible

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hidden reports whether r is one of the characters this package escapes or
// strips. Newline and tab are ordinary text.
func Hidden(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E,
		r >= 0x2066 && r <= 0x2069, r == 0xFEFF, r == 0x2060,
		r == 0x2028, r == 0x2029, r == utf8.RuneError:
		return true
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// Strip removes every hidden character and every byte that is not UTF-8.
func Strip(s string) string {
	return strings.Map(func(r rune) rune {
		if Hidden(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
}

// Escape writes every hidden character as a Go-style escape (\u202e, \x1b,
// \x00) and every byte that is not UTF-8 as \xNN, so a person sees that it
// is there. A "\r\n" line ending is kept; a lone "\r" (which returns a
// terminal's cursor to overwrite the line) is escaped. Text without hidden
// characters is returned as it is.
func Escape(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\r' && i+1 < len(s) && s[i+1] == '\n':
			b.WriteByte('\r')
		case Hidden(r):
			writeEscape(&b, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i, r := range s {
		if r == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			continue
		}
		if Hidden(r) { // an invalid byte decodes as utf8.RuneError
			return true
		}
	}
	return false
}

func writeEscape(b *strings.Builder, r rune) {
	switch {
	case r <= 0xFF:
		fmt.Fprintf(b, `\x%02x`, r)
	case r <= 0xFFFF:
		fmt.Fprintf(b, `\u%04x`, r)
	default:
		fmt.Fprintf(b, `\U%08x`, r)
	}
}

// Cut is s within n runes, a cut ending in "…": for a value quoted in a
// message (an id, a server's error text), whose lines stay as they are.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s // no more runes than bytes
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Clip makes text one line of at most n runes for a list a person or the
// model reads (a skill's description, a hook's command): runs of spaces
// and line breaks become one space, and a cut ends with "…".
func Clip(s string, n int) string {
	return Cut(strings.Join(strings.Fields(s), " "), n)
}
