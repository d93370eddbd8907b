// Package review is kin's review of a change: the diff a target names
// (uncommitted changes, a branch against its base, one commit), computed
// through package gitx so a hostile repository's configured programs never
// run, framed as the repository's text (boundary.Frame) for a turn in
// ask mode with kin's review instructions, and the report_finding tool
// through which the model reports what it found.
//
// What crosses in: the repository's files and history (the diff, which
// may say anything, including "ignore your instructions": it is framed,
// capped and never a command), the target the person or an editor names
// (validated here before git sees it), and the model's findings (checked
// by the tool: a file inside the repository, sane lines, bounded text).
// Files whose names or content say they hold secrets (boundary's rules)
// are left out of the diff, and named as left out.
package review

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Target is what a review looks at: exactly one of its fields.
type Target struct {
	// Uncommitted: the working tree and index against HEAD, untracked
	// files included.
	Uncommitted bool `json:"uncommitted,omitempty"`
	// Base: the working tree against where HEAD left Base (their merge
	// base): a branch's changes before it is merged.
	Base string `json:"base,omitempty"`
	// Commit: one commit against its first parent.
	Commit string `json:"commit,omitempty"`
}

// Errors of a review that cannot start (each wrapped with the details).
var (
	ErrBadTarget       = errors.New("invalid review target")
	ErrNotRepository   = errors.New("not a git repository")
	ErrUnknownRevision = errors.New("unknown revision")
	ErrEmptyDiff       = errors.New("nothing to review")
)

// ref is what a base may be: a branch, tag or remote-tracking name, or a
// commit id, never an option (a leading "-") nor revision syntax that
// reaches further (ranges, reflog selectors, :path).
var ref = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._/+-]{0,199}$`) })

// sha is a commit id, abbreviated or whole (SHA-1 or SHA-256).
var sha = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-fA-F]{4,64}$`) })

// Validate checks that exactly one target is named and that it is one git
// will read only as a revision.
func (t Target) Validate() error {
	n := 0
	if t.Uncommitted {
		n++
	}
	if t.Base != "" {
		n++
	}
	if t.Commit != "" {
		n++
	}
	if n != 1 {
		return fmt.Errorf("%w: name exactly one of uncommitted: true, base or commit", ErrBadTarget)
	}
	if t.Base != "" && (!ref().MatchString(t.Base) || strings.Contains(t.Base, "..") || strings.HasSuffix(t.Base, ".lock") || strings.HasSuffix(t.Base, "/")) {
		return fmt.Errorf("%w: base %q is not a branch, tag or commit name", ErrBadTarget, t.Base)
	}
	if t.Commit != "" && !sha().MatchString(t.Commit) {
		return fmt.Errorf("%w: commit %q is not a commit id (4 to 64 hex digits)", ErrBadTarget, t.Commit)
	}
	return nil
}

// String names the target for a person.
func (t Target) String() string {
	switch {
	case t.Base != "":
		return "the changes against " + t.Base
	case t.Commit != "":
		return "commit " + t.Commit
	}
	return "the uncommitted changes"
}

// ParseArgs reads /review's arguments: nothing (the uncommitted changes),
// "base NAME" or "commit SHA" ("--base NAME", "--commit SHA" too).
func ParseArgs(args string) (Target, error) {
	f := strings.Fields(args)
	var t Target
	switch {
	case len(f) == 0:
		t.Uncommitted = true
	case len(f) == 1 && (f[0] == "uncommitted" || f[0] == "--uncommitted"):
		t.Uncommitted = true
	case len(f) == 2 && (f[0] == "base" || f[0] == "--base"):
		t.Base = f[1]
	case len(f) == 2 && (f[0] == "commit" || f[0] == "--commit"):
		t.Commit = f[1]
	default:
		return t, fmt.Errorf("%w: /review takes nothing (the uncommitted changes), base NAME or commit SHA", ErrBadTarget)
	}
	return t, t.Validate()
}
