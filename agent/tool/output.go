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

// CutToMax is r with its output cut to MaxOutput (the status then says
// output_limit, and Saw says what was cut): the one rule every result
// follows before the model sees it, from a call that just ran or a task
// followed after a restart.
func (r Result) CutToMax() Result {
	if len(r.Output) <= MaxOutput {
		return r
	}
	n := len(r.Output)
	r.Output, _ = Head(r.Output, MaxOutput)
	r.Saw = r.Saw.AddCut(Cut{What: "output", Bytes: n, Kept: MaxOutput,
		Why: fmt.Sprintf("a tool result may take %d bytes; the model got the first part and was told it was cut", MaxOutput)})
	if r.Status == StatusCompleted {
		r.Status = StatusOutputLimit
	}
	return r
}
