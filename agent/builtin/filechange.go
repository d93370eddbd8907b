package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/files"
	"github.com/kin-dev/kin/agent/textdiff"
	"github.com/kin-dev/kin/agent/tool"
)

// maxEditSize bounds the files write_file and edit_file handle: the whole
// old and new text travel in the approval.
const maxEditSize = 8 << 20

// fileChange is a prepared write of one file.
type fileChange struct {
	toolName string
	ws       *boundary.Workspace
	t        boundary.Target
	fa       files.Access
	env      tool.Env
	existed  bool
	// unsaved: old is the editor's buffer of the file, which differs from
	// the file on disk (the diff is against what the person sees).
	unsaved bool
	title   string // the approval's title
	old     []byte
	new     []byte
	diff    tool.Diff
}

// loadForChange resolves a write's path and reads what the person sees
// there now: the editor's buffer when the file is open, else the disk.
func loadForChange(ctx context.Context, toolName string, env tool.Env, p string) (*fileChange, error) {
	ws, err := workspaceOf(env)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", toolName, err)
	}
	t, err := ws.Resolve(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", toolName, err)
	}
	fc := &fileChange{toolName: toolName, ws: ws, t: t, fa: filesOf(env), env: env}
	f, err := fc.fa.Open(ctx, t.Real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// a new file (a dangling symlink is replaced, never followed)
	case errors.Is(err, files.ErrIsDir):
		return nil, fmt.Errorf("%s: %s is a directory", toolName, t.Disp)
	case errors.Is(err, files.ErrNotRegular):
		return nil, fmt.Errorf("%s: %s %v", toolName, t.Disp, err)
	case err != nil:
		return nil, fmt.Errorf("%s: %s: %v", toolName, t.Disp, err)
	case f.Size > maxEditSize:
		f.Close()
		return nil, fmt.Errorf("%s: %s is %d bytes; files over %d MiB are not edited with this tool", toolName, t.Disp, f.Size, maxEditSize>>20)
	default:
		fc.unsaved = f.Unsaved
		if fc.old, err = files.ReadAll(f, maxEditSize); err != nil {
			return nil, fmt.Errorf("%s: %s: %v", toolName, t.Disp, err)
		}
		fc.existed = true
	}
	// Refuse now what could not be written (unsaved changes in an editor
	// that cannot apply kin's edits): the person is not asked for nothing.
	if _, err = fc.fa.Plan(ctx, t.Real); err != nil {
		if errors.Is(err, files.ErrUnsaved) || errors.Is(err, files.ErrTooLarge) {
			return nil, fmt.Errorf("%s: %s %v", toolName, t.Disp, err) // "main.go has unsaved changes…"
		}
		return nil, fmt.Errorf("%s: %s: %v", toolName, t.Disp, err)
	}
	return fc, nil
}

// action builds the approval and the Run for the prepared change; verb is
// "Write" or "Edit".
func (fc *fileChange) action(verb string) (*tool.Action, error) {
	if bytes.IndexByte(fc.new, 0) >= 0 {
		return nil, fmt.Errorf("%s: the new content of %s has NUL bytes; only text files are written", fc.toolName, fc.t.Disp)
	}
	if len(fc.new) > maxEditSize {
		return nil, fmt.Errorf("%s: the new content of %s is %d bytes; at most %d MiB are written", fc.toolName, fc.t.Disp, len(fc.new), maxEditSize>>20)
	}
	name := fc.t.Disp
	if fc.t.Outside != "" {
		name = fc.t.Abs
	}
	oldName, newName := "a/"+name, "b/"+name
	if fc.t.Outside != "" {
		oldName, newName = name, name
	}
	if !fc.existed {
		oldName = "/dev/null"
	}
	fc.diff = tool.Diff{
		Path:    fc.t.Abs,
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
			return tool.Result{Status: tool.StatusCompleted, Output: fmt.Sprintf("%s already has this content; nothing written", fc.t.Disp)}
		}}, nil
	}

	fc.title = verb + " " + name
	ap := &tool.Approval{
		Title: fc.title,
		Diffs: []tool.Diff{fc.diff},
		Grant: &tool.Grant{Key: "tool:" + fc.toolName, Label: "Always allow " + fc.toolName},
	}
	var warnings []string
	if fc.t.Outside != "" {
		warnings = append(warnings, fc.t.Outside)
	} else if fc.symlinked() {
		warnings = append(warnings, fmt.Sprintf("%s is a symlink to %s", fc.t.Disp, fc.t.Real))
	}
	later, secret := fc.ws.RunsLater(fc.t), fc.ws.Secret(fc.t)
	if later != "" {
		warnings = append(warnings, fmt.Sprintf("%s makes something run later, outside kin's sandbox (%s)", name, later))
	}
	if secret != "" {
		warnings = append(warnings, fmt.Sprintf("%s is a sensitive path (%s)", name, secret))
	}
	if fc.t.Outside != "" || later != "" || secret != "" {
		// the person decides each time: no "always allow", no mode
		ap.AlwaysAsk = true
		ap.Grant = nil
	}
	ap.Warning = strings.Join(warnings, "; ")
	return &tool.Action{Approval: ap, Run: fc.run}, nil
}

// symlinked reports whether the path as asked leads elsewhere below its
// root (a symlink inside the workspace).
func (fc *fileChange) symlinked() bool {
	for _, r := range fc.ws.Roots() {
		if boundary.Within(r, fc.t.Abs) {
			relAbs, _ := filepath.Rel(r, fc.t.Abs)
			if relAbs == "." {
				relAbs = ""
			}
			return filepath.ToSlash(relAbs) != fc.ws.Rel(fc.t)
		}
	}
	return false
}

// run writes exactly the prepared content, if the file (or the editor's
// buffer of it) is still as it was. Every write of the built-in tools
// passes here and through Access.Write, so a checkpoint hook
// (files.WithBeforeWrite) sees them all.
func (fc *fileChange) run(ctx context.Context, _ func(string)) tool.Result {
	if err := ctx.Err(); err != nil {
		return tool.Failed(fc.toolName + ": cancelled before writing; " + fc.t.Disp + " not written")
	}
	if boundary.RealPath(fc.t.Abs) != fc.t.Real {
		return tool.Failed(fmt.Sprintf("%s: %s: the path resolves elsewhere since the diff was shown (a symlink changed); not written", fc.toolName, fc.t.Disp))
	}
	if bytes.IndexByte(fc.new, 0) >= 0 {
		return tool.Failed(fmt.Sprintf("%s: the new content of %s has NUL bytes; not written", fc.toolName, fc.t.Disp))
	}
	w, err := fc.fa.Write(ctx, files.Change{
		Path: fc.t.Real, Old: fc.old, Existed: fc.existed, New: fc.new,
		Title: fc.title, SessionID: fc.env.SessionID, TurnID: fc.env.TurnID, CallID: fc.env.CallID,
	})
	switch {
	case errors.Is(err, files.ErrUnknown):
		return tool.Result{Status: tool.StatusUnknown, Output: fmt.Sprintf("%s: %s: %v. Do not repeat this edit: read the file to see whether it was applied.", fc.toolName, fc.t.Disp, err)}
	case errors.Is(err, files.ErrConflict):
		return tool.Failed(fmt.Sprintf("%s: %s: file changed since the diff was shown; not written", fc.toolName, fc.t.Disp))
	case errors.Is(err, boundary.ErrOutside):
		return tool.Failed(fmt.Sprintf("%s: %s: refused, the path %v since the diff was shown; not written", fc.toolName, fc.t.Disp, err))
	case err != nil:
		return tool.Failed(fmt.Sprintf("%s: %s: %v; not written", fc.toolName, fc.t.Disp, err))
	}
	d := fc.diff
	added, removed := diffStat(d.Unified)
	var msg string
	if fc.existed {
		msg = fmt.Sprintf("%s %s (+%d -%d lines)", pastTense(fc.toolName), fc.t.Disp, added, removed)
	} else {
		msg = fmt.Sprintf("created %s (%s)", fc.t.Disp, plural(len(textdiff.Lines(string(fc.new))), "line"))
	}
	switch {
	case w.Via == files.ViaEditor && w.Saved:
		msg += " in the editor, which saved it"
	case w.Via == files.ViaEditor:
		msg += " in the editor's buffer, not saved yet: commands see the file on disk until the person saves it"
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
