package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kin-dev/kin/agent/textdiff"
	"github.com/kin-dev/kin/agent/tool"
)

// maxEditSize bounds the files write_file and edit_file handle: the whole
// old and new text travel in the approval.
const maxEditSize = 8 << 20

// fileChange is a prepared write of one file.
type fileChange struct {
	toolName string
	ws       workspace
	t        target
	before   tool.BeforeWrite // the turn's checkpoint, nil without one
	existed  bool
	old      []byte
	new      []byte
	diff     tool.Diff
}

// loadForChange resolves a write's path and reads what is there now.
func loadForChange(toolName string, env tool.Env, p string) (*fileChange, error) {
	ws, err := newWorkspace(env.Roots)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", toolName, err)
	}
	t, err := ws.resolve(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", toolName, err)
	}
	fc := &fileChange{toolName: toolName, ws: ws, t: t, before: env.BeforeWrite}
	fi, err := os.Stat(t.real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// a new file (a dangling symlink is replaced, never followed)
	case err != nil:
		return nil, fmt.Errorf("%s: %s: %v", toolName, t.disp, unwrapPathError(err))
	case fi.IsDir():
		return nil, fmt.Errorf("%s: %s is a directory", toolName, t.disp)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s: %s is not a regular file (%s)", toolName, t.disp, fi.Mode().Type())
	case fi.Size() > maxEditSize:
		return nil, fmt.Errorf("%s: %s is %d bytes; files over %d MiB are not edited with this tool", toolName, t.disp, fi.Size(), maxEditSize>>20)
	default:
		if fc.old, err = os.ReadFile(t.real); err != nil {
			return nil, fmt.Errorf("%s: %s: %v", toolName, t.disp, unwrapPathError(err))
		}
		fc.existed = true
	}
	return fc, nil
}

// action builds the approval and the Run for the prepared change; verb is
// "Write" or "Edit".
func (fc *fileChange) action(verb string) (*tool.Action, error) {
	if bytes.IndexByte(fc.new, 0) >= 0 {
		return nil, fmt.Errorf("%s: the new content of %s has NUL bytes; only text files are written", fc.toolName, fc.t.disp)
	}
	if len(fc.new) > maxEditSize {
		return nil, fmt.Errorf("%s: the new content of %s is %d bytes; at most %d MiB are written", fc.toolName, fc.t.disp, len(fc.new), maxEditSize>>20)
	}
	name := fc.t.disp
	if fc.t.outside != "" {
		name = fc.t.abs
	}
	oldName, newName := "a/"+name, "b/"+name
	if fc.t.outside != "" {
		oldName, newName = name, name
	}
	if !fc.existed {
		oldName = "/dev/null"
	}
	fc.diff = tool.Diff{
		Path:    fc.t.abs,
		OldText: string(fc.old),
		NewText: string(fc.new),
		Unified: textdiff.Unified(oldName, newName, string(fc.old), string(fc.new)),
	}
	if !fc.existed && fc.diff.Unified == "" {
		fc.diff.Unified = fmt.Sprintf("--- %s\n+++ %s\n", oldName, newName) // a new empty file
	}
	if fc.existed && bytes.Equal(fc.old, fc.new) {
		// nothing would change: nothing to approve
		return &tool.Action{Run: func(context.Context, func(string)) tool.Result {
			return tool.Result{Status: tool.StatusCompleted, Output: fmt.Sprintf("%s already has this content; nothing written", fc.t.disp)}
		}}, nil
	}

	ap := &tool.Approval{
		Title: verb + " " + name,
		Diffs: []tool.Diff{fc.diff},
		Grant: &tool.Grant{Key: "tool:" + fc.toolName, Label: "Always allow " + fc.toolName + " in this session"},
	}
	var warnings []string
	if fc.t.outside != "" {
		warnings = append(warnings, fc.t.outside)
	} else if relAbs, relReal := fc.relPaths(); relAbs != relReal {
		warnings = append(warnings, fmt.Sprintf("%s is a symlink to %s", fc.t.disp, fc.t.real))
	}
	pat := fc.sensitive()
	if pat != "" {
		warnings = append(warnings, fmt.Sprintf("%s is a sensitive path (it matches %s)", name, pat))
	}
	if fc.t.outside != "" || pat != "" {
		// the person decides each time: no "always allow"
		ap.AlwaysAsk = true
		ap.Grant = nil
	}
	ap.Warning = strings.Join(warnings, "; ")
	return &tool.Action{Approval: ap, Run: fc.run}, nil
}

// sensitive returns the sensitivePatterns entry the target matches. Below
// a root only the part below it counts (a workspace that itself lives under,
// say, ~/.config stays usable); outside the roots the whole path does.
func (fc *fileChange) sensitive() string {
	if fc.t.outside != "" {
		return sensitive(fc.t.abs, fc.t.real)
	}
	relAbs, relReal := fc.relPaths()
	return sensitive(relAbs, relReal)
}

// relPaths returns, for a target inside the roots, the path as asked
// relative to its root and the real path relative to its real root (they
// differ when a symlink below the root is followed).
func (fc *fileChange) relPaths() (relAbs, relReal string) {
	for _, r := range fc.ws.roots {
		if within(r, fc.t.abs) {
			relAbs, _ = filepath.Rel(r, fc.t.abs)
			break
		}
	}
	relReal, _ = filepath.Rel(fc.ws.real[fc.t.root], fc.t.real)
	return relAbs, relReal
}

// run writes exactly the prepared content, if the file is still as it was.
func (fc *fileChange) run(ctx context.Context, _ func(string)) tool.Result {
	if err := ctx.Err(); err != nil {
		return tool.Failed(fc.toolName + ": cancelled before writing; " + fc.t.disp + " not written")
	}
	if resolveExisting(fc.t.abs) != fc.t.real {
		return tool.Failed(fmt.Sprintf("%s: %s: the path resolves elsewhere since the diff was shown (a symlink changed); not written", fc.toolName, fc.t.disp))
	}
	cur, err := os.ReadFile(fc.t.real)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return tool.Failed(fmt.Sprintf("%s: %s: %v; not written", fc.toolName, fc.t.disp, unwrapPathError(err)))
	}
	if exists != fc.existed || !bytes.Equal(cur, fc.old) {
		return tool.Failed(fmt.Sprintf("%s: %s: file changed since the diff was shown; not written", fc.toolName, fc.t.disp))
	}
	if bytes.IndexByte(fc.new, 0) >= 0 {
		return tool.Failed(fmt.Sprintf("%s: the new content of %s has NUL bytes; not written", fc.toolName, fc.t.disp))
	}
	if fc.before != nil {
		// what the file really is now (checked equal to what was shown)
		if err := fc.before(ctx, tool.FileWrite{Path: fc.t.real, Old: cur, Existed: exists, New: fc.new}); err != nil {
			return tool.Failed(fmt.Sprintf("%s: %s: kin could not keep a checkpoint to undo this change (%v); not written", fc.toolName, fc.t.disp, err))
		}
	}
	if err := writeAtomic(fc.t.real, fc.new); err != nil {
		return tool.Failed(fmt.Sprintf("%s: %s: %v; not written", fc.toolName, fc.t.disp, err))
	}
	d := fc.diff
	added, removed := diffStat(d.Unified)
	var msg string
	if fc.existed {
		msg = fmt.Sprintf("%s %s (+%d -%d lines)", pastTense(fc.toolName), fc.t.disp, added, removed)
	} else {
		msg = fmt.Sprintf("created %s (%s)", fc.t.disp, plural(len(textdiff.Lines(string(fc.new))), "line"))
	}
	return tool.Result{
		Status:  tool.StatusCompleted,
		Output:  msg,
		Content: []tool.Content{{Type: "diff", Diff: &d}},
	}
}

func pastTense(toolName string) string {
	if toolName == NameEditFile {
		return "edited"
	}
	return "wrote"
}

// diffStat counts a unified diff's added and removed lines.
func diffStat(unified string) (added, removed int) {
	for _, l := range strings.Split(unified, "\n") {
		switch {
		case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
	}
	return added, removed
}

// writeAtomic replaces p with data: a temporary file in the same directory,
// synced, then renamed over p. p keeps its permission bits; a new file gets
// 0644 (and missing parent directories 0755).
func writeAtomic(p string, data []byte) error {
	dir := filepath.Dir(p)
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(p); err == nil {
		mode = fi.Mode().Perm() | fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return unwrapPathError(err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(p)+".kin-*")
	if err != nil {
		return unwrapPathError(err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return unwrapPathError(err)
	}
	if err := f.Chmod(mode); err != nil {
		return unwrapPathError(err)
	}
	if err := f.Sync(); err != nil {
		return unwrapPathError(err)
	}
	if err := f.Close(); err != nil {
		return unwrapPathError(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return unwrapPathError(err)
	}
	ok = true
	return nil
}
