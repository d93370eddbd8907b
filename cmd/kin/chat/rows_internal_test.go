package chat

import (
	"strings"
	"testing"
)

// A tab stops at the last column and never wraps, so tabs cannot make a
// line take more rows. rowsOf counted each tab past the margin as a new
// row, and a plan step (or a thought) of the model's with tabs counted
// rows it did not take: redrawn in place (\x1b[NA\x1b[J), it erased that
// many lines above it, a tool call's line among them.
func TestRowsOfTabsNeverWrap(t *testing.T) {
	for _, c := range []struct {
		line string
		w    int
		want int
	}{
		{"a" + strings.Repeat("\t", 12) + "b", 40, 1},
		{"  [ ] step" + strings.Repeat("\t", 30), 80, 1},
		{strings.Repeat("x", 39) + "\t\tyz", 40, 2},
		{"a\tb", 40, 1},
	} {
		if got := rowsOf(c.line, c.w); got != c.want {
			t.Errorf("rowsOf(%q, %d) = %d, a terminal takes %d", c.line, c.w, got, c.want)
		}
	}
}
