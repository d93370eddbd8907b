package tool

import (
	"fmt"
	"strings"
)

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
