package review

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/gitx"
)

// Caps on what a review sends the model: the diff as a whole, and one
// untracked file (read whole, since git has no diff of it).
const (
	MaxDiff      = 256 << 10
	MaxUntracked = 64 << 10
)

// emptyTree is git's empty tree: the base of a repository's first commit
// and of a repository without commits.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// Diff is the change a review looks at.
type Diff struct {
	Target Target
	// Root is the repository's work tree (absolute).
	Root string
	// From is the commit (or tree) the change is measured from.
	From string
	// Files are the paths the diff shows, relative to Root, slash-separated.
	Files []string
	// Left are paths changed but not shown, each with why (a secret, binary,
	// too large).
	Left []string
	// Patch is the unified diff, cut at MaxDiff (Cut) at a line's end.
	Patch string
	Cut   bool
}

// Timeout bounds the git commands of one review's diff. git opens the
// .gitignore and .gitattributes files of the work tree as they are, and a
// FIFO of that name (a repository may bring one) makes it wait for a
// writer forever: the review would never start nor say why.
var Timeout = 2 * time.Minute

// Compute works out the diff target names in the repository dir belongs
// to. Every git command goes through gitx; nothing the repository
// configures runs.
func Compute(ctx context.Context, dir string, t Target) (*Diff, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	d, err := compute(ctx, dir, t)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Errorf("git did not finish the diff within %v (is a .gitignore or .gitattributes in the work tree a FIFO? git waits on one): %w", Timeout, err)
	}
	return d, err
}

func compute(ctx context.Context, dir string, t Target) (*Diff, error) {
	if !gitx.InTree(ctx, dir) {
		return nil, fmt.Errorf("%w: %s is not inside a git work tree", ErrNotRepository, dir)
	}
	root, err := gitx.Toplevel(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotRepository, err)
	}
	// a .git file naming another checkout's git folder would make the
	// diff that repository's content, read outside the workspace
	if err := gitx.Owned(ctx, root); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotRepository, err)
	}
	d := &Diff{Target: t, Root: root}
	var rng []string // what git diff compares
	switch {
	case t.Uncommitted:
		d.From = "HEAD"
		if _, ok := resolve(ctx, root, "HEAD"); !ok {
			d.From = emptyTree // no commit yet: everything is new
		}
		rng = []string{d.From}
	case t.Base != "":
		base, ok := resolve(ctx, root, t.Base)
		if !ok {
			return nil, fmt.Errorf("%w: base %q names no commit in %s", ErrUnknownRevision, t.Base, root)
		}
		mb, err := gitx.Output(ctx, root, "merge-base", "HEAD", base)
		if err != nil {
			return nil, fmt.Errorf("%w: %s and HEAD have no common ancestor", ErrUnknownRevision, t.Base)
		}
		d.From = strings.TrimSpace(mb)
		rng = []string{d.From}
	default:
		c, ok := resolve(ctx, root, t.Commit)
		if !ok {
			return nil, fmt.Errorf("%w: commit %q is not in %s", ErrUnknownRevision, t.Commit, root)
		}
		d.From = emptyTree
		if p, ok := resolve(ctx, root, c+"^1"); ok {
			d.From = p
		}
		rng = []string{d.From, c}
	}
	names, err := gitx.Output(ctx, root, append(append([]string{"diff", "--name-only", "-z", "--no-renames", "--no-relative"}, rng...), "--")...)
	if err != nil {
		return nil, err
	}
	var exclude []string
	for _, p := range split0(names) {
		if why := secret(p); why != "" {
			d.Left = append(d.Left, Quote(p)+" ("+why+")")
			exclude = append(exclude, ":(exclude,literal)"+p)
			continue
		}
		d.Files = append(d.Files, p)
	}
	var patch bytes.Buffer
	if len(d.Files) > 0 {
		args := append([]string{"diff", "--no-color", "--no-renames", "--no-relative", "--src-prefix=a/", "--dst-prefix=b/", "-U3"}, rng...)
		args = append(append(args, "--", "."), exclude...)
		out, err := gitx.Output(ctx, root, args...)
		if err != nil {
			return nil, err
		}
		patch.WriteString(out)
	}
	if t.Uncommitted {
		if err := d.untracked(ctx, &patch); err != nil {
			return nil, err
		}
	}
	if len(d.Files) == 0 {
		if len(d.Left) > 0 {
			return nil, fmt.Errorf("%w: the only changes in %s (%s) are in files kin does not send the model: %s", ErrEmptyDiff, root, t, strings.Join(d.Left, ", "))
		}
		return nil, fmt.Errorf("%w: %s", ErrEmptyDiff, t.none(root))
	}
	kept, keys := dropKeys(patch.String())
	if len(keys) > 0 {
		d.Left = append(d.Left, keys...)
		d.Files = slices.DeleteFunc(d.Files, func(p string) bool {
			return slices.Contains(keys, Quote(p)+" (its content is a private key)")
		})
	}
	if len(d.Files) == 0 {
		return nil, fmt.Errorf("%w: the only changes in %s (%s) are in files kin does not send the model: %s", ErrEmptyDiff, root, t, strings.Join(d.Left, ", "))
	}
	d.Patch, d.Cut = cut(kept, MaxDiff)
	return d, nil
}

// dropKeys takes out of a patch every file whose lines (added, removed
// or context) hold a private key (boundary.SecretContent), naming each.
func dropKeys(patch string) (string, []string) {
	if !strings.Contains(patch, "PRIVATE KEY") && !strings.Contains(patch, "PuTTY-User-Key-File") {
		return patch, nil
	}
	var kept strings.Builder
	var left []string
	for _, sec := range sections(patch) {
		key := false
		for _, l := range strings.Split(sec, "\n") {
			// Every line of content counts, not only added ones: a commit
			// that removes a key committed by mistake shows it in "-"
			// lines, and a change next to one in " " lines. (A header
			// line, "--- a/x", is never a key either way.)
			if l != "" && strings.ContainsRune("+- ", rune(l[0])) && boundary.SecretContent([]byte(l[1:])) != "" {
				key = true
				break
			}
		}
		if key {
			left = append(left, Quote(sectionPath(sec))+" (its content is a private key)")
			continue
		}
		kept.WriteString(sec)
	}
	return kept.String(), left
}

// sections splits a patch at its "diff --git" lines.
func sections(patch string) []string {
	var out []string
	start := 0
	for i := 0; i < len(patch); {
		j := strings.Index(patch[i:], "\ndiff --git ")
		if j < 0 {
			break
		}
		out = append(out, patch[start:i+j+1])
		start = i + j + 1
		i = start
	}
	return append(out, patch[start:])
}

// sectionPath is the path a section's "+++ b/" (or "--- a/") line names.
func sectionPath(sec string) string {
	for _, l := range strings.Split(sec, "\n") {
		if p, ok := strings.CutPrefix(l, "+++ b/"); ok {
			return p
		}
	}
	for _, l := range strings.Split(sec, "\n") {
		if p, ok := strings.CutPrefix(l, "--- a/"); ok {
			return p
		}
	}
	return "a file"
}

// none says a target has no changes.
func (t Target) none(root string) string {
	switch {
	case t.Base != "":
		return "the working tree of " + root + " has no changes against " + t.Base
	case t.Commit != "":
		return "commit " + t.Commit + " changes no file"
	}
	return "there are no uncommitted changes in " + root
}

// resolve is the commit rev names, when it names one.
func resolve(ctx context.Context, root, rev string) (string, bool) {
	out, err := gitx.Output(ctx, root, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(out), true
}

// untracked adds the files git does not track yet (and does not ignore)
// as new files: read beneath the work tree (os.Root: a symlink that leads
// out is not followed), regular files only, each at most MaxUntracked,
// text only, never a secret.
func (d *Diff) untracked(ctx context.Context, patch *bytes.Buffer) error {
	out, err := gitx.Output(ctx, d.Root, "ls-files", "--others", "--exclude-standard", "-z", "--full-name")
	if err != nil {
		return err
	}
	paths := split0(out)
	if len(paths) == 0 {
		return nil
	}
	r, err := os.OpenRoot(d.Root)
	if err != nil {
		return err
	}
	defer r.Close()
	for _, p := range paths {
		if why := secret(p); why != "" {
			d.Left = append(d.Left, Quote(p)+" ("+why+")")
			continue
		}
		text, why := readNew(r, p)
		if why == "" {
			why = boundary.SecretContent([]byte(text))
		}
		if why != "" {
			d.Left = append(d.Left, Quote(p)+" ("+why+")")
			continue
		}
		d.Files = append(d.Files, p)
		writeNewFile(patch, p, text)
	}
	return nil
}

// readNew reads an untracked file, or says why it is not shown.
func readNew(r *os.Root, p string) (string, string) {
	st, err := r.Lstat(filepath.FromSlash(p))
	if err != nil {
		return "", "it cannot be read"
	}
	if !st.Mode().IsRegular() {
		return "", "not a regular file"
	}
	if st.Size() > MaxUntracked {
		return "", fmt.Sprintf("new file over %d KiB", MaxUntracked>>10)
	}
	f, err := boundary.OpenIn(r, filepath.FromSlash(p)) // swapped for a FIFO since the Lstat: refused, not waited on
	if err != nil {
		return "", "it cannot be read"
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxUntracked+1))
	if err != nil {
		return "", "it cannot be read"
	}
	if len(b) > MaxUntracked {
		return "", fmt.Sprintf("new file over %d KiB", MaxUntracked>>10)
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return "", "binary"
	}
	return string(b), ""
}

// writeNewFile writes an untracked file as git would show it added.
func writeNewFile(w *bytes.Buffer, p, text string) {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	fmt.Fprintf(w, "diff --git a/%s b/%s\nnew file (untracked)\n--- /dev/null\n+++ b/%s\n", p, p, p)
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "@@ -0,0 +1,%d @@\n", len(lines))
	for _, l := range lines {
		w.WriteString("+" + l)
		if !strings.HasSuffix(l, "\n") {
			w.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// secret says why a path's content is never sent (boundary's rules).
func secret(p string) string {
	if n := boundary.SecretName(p); n != "" {
		return "its name says it holds secrets (" + n + ")"
	}
	return ""
}

func split0(s string) []string {
	var out []string
	for _, p := range strings.Split(s, "\x00") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// cut keeps text to at most max bytes, ending at a line's end.
func cut(text string, max int) (string, bool) {
	if len(text) <= max {
		return text, false
	}
	text = text[:max]
	if i := strings.LastIndexByte(text, '\n'); i > 0 {
		text = text[:i+1]
	}
	return text, true
}

// IsUserError reports whether err is the person's to fix (a bad target,
// no repository, an unknown revision, nothing to review), not kin's.
func IsUserError(err error) bool {
	return errors.Is(err, ErrBadTarget) || errors.Is(err, ErrNotRepository) || errors.Is(err, ErrUnknownRevision) || errors.Is(err, ErrEmptyDiff)
}
