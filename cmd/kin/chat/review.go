package chat

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kin-dev/kin/rpc"
)

// finding shows a review/finding as the next entry of the review's list:
// a heading at the review's first, then "1. error calc.go:6  title" with
// the body indented below. Everything shown is the model's text, cleaned
// of terminal controls.
func (u *ui) finding(params json.RawMessage) {
	var f rpc.ReviewFinding
	if json.Unmarshal(params, &f) != nil || f.SessionID != u.session {
		return
	}
	if u.reviewed == nil {
		u.reviewed = map[string]int{}
	}
	s := u.scr
	if u.reviewed[f.TurnID] == 0 {
		s.line(s.cyan("[review findings]"))
	}
	u.reviewed[f.TurnID]++
	s.line(fmt.Sprintf("  %d. %s %s  %s", u.reviewed[f.TurnID], u.severity(f.Severity), cleanLine(findingPlace(u.o.Cwd, f)), cleanLine(f.Title)))
	if b := strings.TrimSpace(clean(f.Body)); b != "" {
		s.line(s.dim("     " + strings.ReplaceAll(b, "\n", "\n     ")))
	}
}

func (u *ui) severity(sev string) string {
	switch sev {
	case "error":
		return u.scr.red("error")
	case "warning":
		return u.scr.yellow("warning")
	}
	return u.scr.dim(cleanLine(sev))
}

// findingPlace is "file:line" or "file:first-last", the file relative to
// the folder kin chat runs in when it is inside it.
func findingPlace(cwd string, f rpc.ReviewFinding) string {
	name := f.File
	if rel, err := filepath.Rel(cwd, f.File); err == nil && cwd != "" && !strings.HasPrefix(rel, "..") {
		name = rel
	}
	place := fmt.Sprintf("%s:%d", name, f.Range.Start.Line+1)
	if f.Range.End.Line > f.Range.Start.Line+1 {
		place += fmt.Sprintf("-%d", f.Range.End.Line)
	}
	return place
}
