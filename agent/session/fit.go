package session

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/kin-dev/kin/agent/tool"
)

// What one record may hold. Every line kin writes stays under MaxRecord, far
// below what the reader accepts (maxLine), so kin can always read what it
// wrote; a field over its cap is cut with a marker saying how much was left
// out.
const (
	// MaxRecord bounds one encoded record.
	MaxRecord = 8 << 20
	// MaxText bounds a question and an answer (the whole answer, over all of
	// its streamed pieces).
	MaxText = 2 << 20
	// MaxTitle bounds a session's title.
	MaxTitle = 512

	maxArguments = 1 << 20
	maxOutput    = 1 << 20
	maxSmall     = 64 << 10 // names, ids, errors, reasons
	// maxEncrypted bounds a reasoning item's encrypted content; one over it
	// is left out whole (a cut one could not be sent back).
	maxEncrypted = 1 << 20
	// maxShown bounds each text of a call's content and of an approval's
	// diffs when the record as a whole is too long.
	maxShown = 256 << 10
)

// Cut returns s cut so that it and its marker fit in limit bytes (on a
// character boundary), the marker saying how many bytes were left out; s
// itself when it fits. Cutting a text that was cut before adds up: the new
// marker counts what the earlier cut left out too, so a field cut twice
// (once where it is made, again where it is recorded) still says how much
// is missing. A limit smaller than a marker keeps the marker whole.
func Cut(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	body, earlier := splitMarker(s)
	// The marker is longest for the most bytes left out: room for that one
	// leaves room for the real one.
	room := max(0, limit-len(CutMarker(len(body)+earlier)))
	p := Prefix(body, room)
	return p + CutMarker(len(body)-len(p)+earlier)
}

// markerRE is a CutMarker at the end of a text.
var markerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\n\[kin: (\d+) more bytes were not recorded\]$`) })

// splitMarker takes a CutMarker off the end of s: the text before it and
// the count it gave (0 and s itself without one).
func splitMarker(s string) (string, int) {
	if !strings.HasSuffix(s, " more bytes were not recorded]") {
		return s, 0
	}
	m := markerRE().FindStringSubmatchIndex(s)
	if m == nil {
		return s, 0
	}
	n, err := strconv.Atoi(s[m[2]:m[3]])
	if err != nil {
		return s, 0
	}
	return s[:m[0]], n
}

// Prefix is the longest start of s within max bytes that does not split a
// character.
func Prefix(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// CutMarker is what replaces n bytes that were not recorded.
func CutMarker(n int) string { return fmt.Sprintf("\n[kin: %d more bytes were not recorded]", n) }

// Fit cuts a record's fields to their caps. Callers that keep a record in
// memory fit it first, so what they keep is what the log holds.
func Fit(r Record) Record {
	r.Title = Cut(r.Title, MaxTitle)
	r.Text = Cut(r.Text, MaxText)
	r.Arguments = Cut(r.Arguments, maxArguments)
	r.Output = Cut(r.Output, maxOutput)
	r.Error = Cut(r.Error, maxSmall)
	r.Reason = Cut(r.Reason, maxSmall)
	r.Name = Cut(r.Name, maxSmall)
	r.Phase = Cut(r.Phase, maxSmall)
	r.Field = Cut(r.Field, maxSmall)
	if len(r.Encrypted) > maxEncrypted {
		r.Encrypted = ""
	}
	if len(r.Summary) > 0 {
		sum := make([]string, len(r.Summary))
		for i, s := range r.Summary {
			sum[i] = Cut(s, maxShown)
		}
		r.Summary = sum
	}
	if len(r.Parts) > 0 {
		ps := make([]Part, len(r.Parts))
		for i, p := range r.Parts {
			p.Text = Cut(p.Text, MaxText)
			ps[i] = p
		}
		r.Parts = ps
	}
	if r.Undo != nil && len(r.Undo.Conflicts) > 0 {
		u := *r.Undo
		u.Conflicts = make([]UndoConflict, len(r.Undo.Conflicts))
		for i, c := range r.Undo.Conflicts {
			u.Conflicts[i] = UndoConflict{Path: c.Path, Reason: Cut(c.Reason, maxSmall), Diff: Cut(c.Diff, maxShown)}
		}
		r.Undo = &u
	}
	return r
}

// encode is the line (with its newline) of a record already through Fit
// (Log.Append fits it). A record still too long after Fit carries a large
// call content or approval, or the diffs of an undo's or a rollback's
// conflicts: their texts are cut, and dropped with a note as a last resort.
func encode(r Record) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil || len(b) < MaxRecord {
		return append(b, '\n'), err
	}
	r.Content = cutContent(r.Content, maxShown)
	r.Approved = cutApproval(r.Approved, maxShown)
	// An undo or a rollback of many files changed since carries a diff per
	// file: together they share half a record.
	if n := conflicts(r); n > 0 {
		r.Undo, r.Rollback = cutConflicts(r.Undo, r.Rollback, max(1<<10, MaxRecord/2/n))
	}
	if b, err = json.Marshal(r); err != nil || len(b) < MaxRecord {
		return append(b, '\n'), err
	}
	if len(r.Content) > 0 {
		r.Content = []tool.Content{{Type: "text", Text: "[kin: what this call showed was too large to record]"}}
	}
	if r.Approved != nil {
		a := *r.Approved
		a.Diffs, a.Arguments = nil, ""
		a.Warning = Cut(a.Warning, maxSmall) + "\n[kin: what was shown for this decision was too large to record]"
		r.Approved = &a
	}
	if conflicts(r) > 0 {
		r.Undo, r.Rollback = cutConflicts(r.Undo, r.Rollback, 0)
	}
	if b, err = json.Marshal(r); err != nil || len(b) < MaxRecord {
		return append(b, '\n'), err
	}
	return nil, fmt.Errorf("a %s record of %d bytes is too large to record", r.Type, len(b))
}

func cutContent(cs []tool.Content, max int) []tool.Content {
	if len(cs) == 0 {
		return cs
	}
	out := make([]tool.Content, len(cs))
	for i, c := range cs {
		c.Text = Cut(c.Text, max)
		if c.Diff != nil {
			d := cutDiff(*c.Diff, max)
			c.Diff = &d
		}
		out[i] = c
	}
	return out
}

func cutApproval(a *tool.Approval, max int) *tool.Approval {
	if a == nil {
		return nil
	}
	c := *a
	c.Arguments = Cut(c.Arguments, max)
	c.Command = Cut(c.Command, max)
	c.Warning = Cut(c.Warning, max)
	if len(a.Diffs) > 0 {
		c.Diffs = make([]tool.Diff, len(a.Diffs))
		for i, d := range a.Diffs {
			c.Diffs[i] = cutDiff(d, max)
		}
	}
	return &c
}

func cutDiff(d tool.Diff, max int) tool.Diff {
	d.OldText, d.NewText, d.Unified = Cut(d.OldText, max), Cut(d.NewText, max), Cut(d.Unified, max)
	return d
}

// conflicts counts the files an undo or a rollback record left as they were.
func conflicts(r Record) int {
	n := 0
	if r.Undo != nil {
		n += len(r.Undo.Conflicts)
	}
	if r.Rollback != nil {
		for _, u := range r.Rollback.Undos {
			n += len(u.Conflicts)
		}
	}
	return n
}

// cutConflicts are copies of an undo and a rollback with each conflict's
// diff cut to max bytes, or left out (max 0), saying so; paths and reasons
// stay whole.
func cutConflicts(u *Undo, rb *Rollback, max int) (*Undo, *Rollback) {
	fit := func(u Undo) Undo {
		cs := make([]UndoConflict, len(u.Conflicts))
		for i, c := range u.Conflicts {
			switch {
			case c.Diff == "":
			case max > 0:
				c.Diff = Cut(c.Diff, max)
			default:
				c.Diff = ""
				c.Reason += " [kin: its diff was not recorded: the record was too large]"
			}
			cs[i] = c
		}
		u.Conflicts = cs
		return u
	}
	if u != nil {
		c := fit(*u)
		u = &c
	}
	if rb != nil {
		c := *rb
		c.Undos = make([]Undo, len(rb.Undos))
		for i, x := range rb.Undos {
			c.Undos[i] = fit(x)
		}
		rb = &c
	}
	return u, rb
}
