package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/tool"
)

//go:embed list_dir.md
var listDirDescription string

const listDirSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory to list: relative to the first workspace folder, or absolute inside a workspace folder. Default: the first workspace folder."},
    "glob": {"type": "string", "description": "Only entries whose path relative to path matches, listed recursively; ** spans directories, e.g. **/*.go."}
  },
  "additionalProperties": false
}`

// listMaxEntries caps one listing.
const listMaxEntries = 1000

type listDirTool struct{}

type listDirArgs struct {
	Path string `json:"path"`
	Glob string `json:"glob"`
}

func (listDirTool) Spec() tool.Spec {
	return spec(NameListDir, listDirDescription, listDirSchema, tool.KindRead)
}

func (listDirTool) Prepare(ctx context.Context, env tool.Env, raw json.RawMessage) (*tool.Action, error) {
	var args listDirArgs
	if err := decodeArgs(NameListDir, raw, &args); err != nil {
		return nil, err
	}
	ws, err := workspaceOf(env)
	if err != nil {
		return nil, fmt.Errorf("list_dir: %v", err)
	}
	if args.Path == "" {
		args.Path = ws.Roots()[0]
	}
	t, err := confined(ws, args.Path)
	if err != nil {
		return nil, fmt.Errorf("list_dir: %v", err)
	}
	fi, err := boundary.Stat(t.Real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("list_dir: %s does not exist", t.Disp)
	case err != nil:
		return nil, fmt.Errorf("list_dir: %s: %v", t.Disp, unwrapPathError(err))
	case !fi.IsDir():
		return nil, fmt.Errorf("list_dir: %s is a file, not a directory; use read_file to read it", t.Disp)
	}
	var g *glob
	if args.Glob != "" {
		if g, err = compileGlob(args.Glob, false); err != nil {
			return nil, fmt.Errorf("list_dir: %v", err)
		}
	}
	// Listing a credentials folder ($KIN_HOME, ~/.ssh) names what is in
	// it: asked, like reading a secret. Below a listed folder the walk
	// does not enter them (see treeWalk).
	return &tool.Action{Approval: secretRead(NameListDir, ws, t, ""), Run: func(ctx context.Context, _ func(string)) tool.Result {
		out, err := listDir(ctx, ws, t, g)
		if err != nil {
			return tool.Failed("list_dir: " + err.Error())
		}
		return tool.Result{Status: tool.StatusCompleted, Output: out}
	}}, nil
}

type listEntry struct {
	rel  string // relative to the listed directory, '/'-separated
	kind string
	size int64
	link string
}

func listDir(ctx context.Context, ws *boundary.Workspace, t boundary.Target, g *glob) (string, error) {
	root := ws.Real()[t.Root]
	var entries []listEntry
	more := false
	add := func(abs, rel string, e fs.DirEntry) error {
		if len(entries) == listMaxEntries {
			more = true
			return errStopWalk
		}
		le := listEntry{rel: rel, kind: "file"}
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			le.kind = "symlink"
			le.link, _ = os.Readlink(abs)
		case e.IsDir():
			le.kind = "dir"
		case !e.Type().IsRegular():
			le.kind = "other"
		default:
			if fi, err := e.Info(); err == nil {
				le.size = fi.Size()
			}
		}
		entries = append(entries, le)
		return nil
	}
	var err error
	if g == nil {
		err = treeWalk(ctx, ws, root, t.Real, func(abs string, elems []string, e fs.DirEntry) error {
			if err := add(abs, elems[len(elems)-1], e); err != nil {
				return err
			}
			return fs.SkipDir // this level only
		})
	} else {
		err = treeWalk(ctx, ws, root, t.Real, func(abs string, elems []string, e fs.DirEntry) error {
			rel := joinElems(elems)
			if g.match(rel) {
				return add(abs, rel, e)
			}
			return nil
		})
	}
	if err != nil {
		return "", err
	}
	if g == nil {
		// directories first, then files, each by name
		sort.SliceStable(entries, func(i, j int) bool {
			di, dj := entries[i].kind == "dir", entries[j].kind == "dir"
			if di != dj {
				return di
			}
			return entries[i].rel < entries[j].rel
		})
	}

	var sb strings.Builder
	what := t.Disp
	if what == "." {
		what = "the workspace folder " + ws.Roots()[0]
	}
	switch {
	case len(entries) == 0 && g == nil:
		return fmt.Sprintf("%s is empty (or holds only gitignored entries)", what), nil
	case len(entries) == 0:
		return fmt.Sprintf("nothing in %s matches %q (gitignored entries are left out)", what, g.String()), nil
	}
	for _, e := range entries {
		size := "-"
		if e.kind == "file" {
			size = fmt.Sprint(e.size)
		}
		name := e.rel
		switch e.kind {
		case "dir":
			name += "/"
		case "symlink":
			name += " -> " + e.link
		}
		fmt.Fprintf(&sb, "%-7s %10s  %s\n", e.kind, size, name)
	}
	if more {
		fmt.Fprintf(&sb, "[only the first %d entries are listed; narrow the path or the glob]\n", listMaxEntries)
	}
	out, _ := tool.Head(sb.String(), tool.MaxOutput)
	return out, nil
}

// String returns the glob as given.
func (g *glob) String() string { return g.src }
