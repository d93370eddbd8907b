package builtin

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/kin-dev/kin/agent/boundary"
)

// errStopWalk ends a walk early without an error.
var errStopWalk = errors.New("stop walk")

// treeWalk walks dir (an existing directory below root, both real paths) in
// lexical order: .git is skipped, gitignored entries are skipped (and
// ignored directories not entered), symlinks are reported but never
// followed, and folders that hold secrets ($KIN_HOME, ~/.ssh: the trust
// boundary's) are reported but not entered (unless the walk starts in
// one, which the person approved). Folders are read through the
// boundary's resolver. visit gets each entry's absolute path and its
// elements below dir; it must not keep elems. Returning errStopWalk ends
// the walk.
func treeWalk(ctx context.Context, ws *boundary.Workspace, root, dir string, visit func(abs string, elems []string, e fs.DirEntry) error) error {
	ig, base := newIgnorer(root, dir)
	// a walk that starts in a secret folder was approved as such
	w := &walker{ctx: ctx, ws: ws, ig: ig, visit: visit, depth0: len(base), secrets: ws.SecretPath(dir) != ""}
	buf := make([]string, len(base), len(base)+32)
	copy(buf, base)
	err := w.walk(dir, buf)
	if errors.Is(err, errStopWalk) {
		return nil
	}
	return err
}

type walker struct {
	ctx context.Context
	ws  *boundary.Workspace
	// secrets: enter folders that hold secrets (the walk starts in one)
	secrets bool
	ig      *ignorer
	visit   func(string, []string, fs.DirEntry) error
	depth0  int // elements from root to the walk's start
}

func (w *walker) walk(dir string, elems []string) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	entries, err := boundary.ReadDir(dir)
	if err != nil {
		return nil // unreadable directories are skipped, as grep -r -s does
	}
	if len(elems) > w.depth0 { // the start's own .gitignore is loaded already
		for _, e := range entries {
			if e.Name() == ".gitignore" {
				if w.ig.push(dir, len(elems)) {
					defer w.ig.pop()
				}
				break
			}
		}
	}
	for _, e := range entries {
		name := e.Name()
		if name == ".git" {
			continue
		}
		child := append(elems, name)
		isDir := e.IsDir()
		if w.ig.ignored(child, isDir) {
			continue
		}
		abs := filepath.Join(dir, name)
		if err := w.visit(abs, child[w.depth0:], e); err != nil {
			if errors.Is(err, fs.SkipDir) {
				continue
			}
			return err
		}
		if isDir && (w.secrets || w.ws.SecretPath(abs) == "") {
			if err := w.walk(abs, child); err != nil {
				return err
			}
		}
	}
	return nil
}

// joinElems joins path elements with '/'.
func joinElems(elems []string) string { return strings.Join(elems, "/") }
