package tool

import (
	"fmt"
	"strings"
)

// Truncate keeps the head and tail of s within max bytes and marks the cut,
// so the model sees both how output began and how it ended.
func Truncate(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	marker := fmt.Sprintf("\n[... %d bytes cut ...]\n", len(s)-max)
	keep := max - len(marker)
	if keep < 0 {
		keep = 0
	}
	head := keep / 2
	tail := keep - head
	return validUTF8(s[:head]) + marker + validUTF8(s[len(s)-tail:]), true
}

// Head keeps the first part of s within max bytes and marks the cut.
func Head(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	marker := fmt.Sprintf("\n[... truncated: %d of %d bytes shown ...]", max, len(s))
	keep := max - len(marker)
	if keep < 0 {
		keep = 0
	}
	return validUTF8(s[:keep]) + marker, true
}

// validUTF8 drops a rune split by a cut.
func validUTF8(s string) string { return strings.ToValidUTF8(s, "") }
