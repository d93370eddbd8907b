package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/kin-dev/kin/agent/files"
	"github.com/kin-dev/kin/agent/tool"
)

// workspace is the set of roots a call may touch.
type workspace struct {
	roots []string // as the editor gave them, cleaned, absolute
	real  []string // the same with symlinks resolved
}

func newWorkspace(roots []string) (workspace, error) {
	var w workspace
	for _, r := range roots {
		if r == "" || !filepath.IsAbs(r) {
			continue
		}
		r = filepath.Clean(r)
		w.roots = append(w.roots, r)
		w.real = append(w.real, resolveExisting(r))
	}
	if len(w.roots) == 0 {
		return w, errors.New("no workspace folder is open, so there is nothing this tool may touch")
	}
	return w, nil
}

// target is a path from a call's arguments, resolved against the roots.
type target struct {
	abs  string // cleaned absolute path, as asked
	real string // abs with every symlink along its existing prefix resolved
	// disp shows the path to the model and the person: relative to the
	// first root when inside it, else absolute.
	disp string
	// root indexes the root holding real (-1 when outside every root).
	root int
	// outside says why the path is outside the roots ("" when inside).
	outside string
}

// resolve turns an argument path into a target. Relative paths are relative
// to the first root. It fails only on an empty path.
func (w workspace) resolve(p string) (target, error) {
	if strings.TrimSpace(p) == "" {
		return target{}, errors.New("the path is empty")
	}
	if strings.HasPrefix(p, "~/") || p == "~" {
		return target{}, fmt.Errorf("path %q: ~ is not expanded; give a path relative to the workspace (%s) or an absolute one", p, w.roots[0])
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(w.roots[0], abs)
	}
	abs = filepath.Clean(abs)
	t := target{abs: abs, real: resolveExisting(abs), root: -1}
	t.disp = w.display(abs)

	lexical := -1
	for i, r := range w.roots {
		if files.Within(r, abs) {
			lexical = i
			break
		}
	}
	for i, r := range w.real {
		if files.Within(r, t.real) {
			t.root = i
			break
		}
	}
	switch {
	case lexical < 0:
		t.root = -1
		t.outside = fmt.Sprintf("%s is outside the workspace (%s)", p, strings.Join(w.roots, ", "))
	case t.root < 0:
		t.outside = fmt.Sprintf("%s resolves through a symlink to %s, outside the workspace (%s)", p, t.real, strings.Join(w.roots, ", "))
	}
	return t, nil
}

// confined resolves p and refuses it when it leaves the roots: what the read
// tools (and bash's cwd) use.
func (w workspace) confined(p string) (target, error) {
	t, err := w.resolve(p)
	if err != nil {
		return t, err
	}
	if t.outside != "" {
		return t, fmt.Errorf("refused: %s; this tool only reads inside the workspace folders", t.outside)
	}
	return t, nil
}

// display shows an absolute path relative to the first root when inside it.
func (w workspace) display(abs string) string {
	if files.Within(w.roots[0], abs) {
		rel, err := filepath.Rel(w.roots[0], abs)
		if err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return abs
}

// displayReal shows a path below real root i the way display shows paths
// below root i.
func (w workspace) displayReal(i int, rel string) string {
	if i == 0 {
		return rel
	}
	return filepath.Join(w.roots[i], filepath.FromSlash(rel))
}

// resolveExisting resolves the symlinks along the longest existing prefix of
// the clean absolute path p and appends the rest unchanged (files.RealPath:
// the Overlay keys buffers the same way).
func resolveExisting(p string) string { return files.RealPath(p) }

// sensitivePatterns are the paths a write is always asked about, whatever
// the session's grants (the person sees no "always allow" for them). They
// are matched case-insensitively with path.Match: a pattern ending in "/"
// against every directory along the path (so everything below it is
// covered), any other pattern against the file name.
var sensitivePatterns = []string{
	// environment and secrets files
	".env", ".env.*", ".envrc", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore",
	// ssh keys
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "authorized_keys", "known_hosts",
	// credential files
	".npmrc", ".yarnrc.yml", ".pypirc", ".netrc", "_netrc", ".git-credentials", ".pgpass",
	".htpasswd", "credentials", "credentials.json", "*.credentials", "secrets.json", "secrets.yaml", "secrets.yml",
	// directories holding repository internals, keys and cloud credentials
	".git/", ".ssh/", ".gnupg/", ".aws/", ".azure/", ".kube/", ".docker/", ".config/gcloud/",
}

// sensitive returns the pattern a path matches, or "".
func sensitive(paths ...string) string {
	for _, p := range paths {
		p = strings.ToLower(filepath.ToSlash(p))
		elems := strings.Split(strings.Trim(p, "/"), "/")
		base := elems[len(elems)-1]
		for _, pat := range sensitivePatterns {
			if dir, ok := strings.CutSuffix(pat, "/"); ok {
				// every element (a file named like the directory, such as
				// a worktree's .git file, counts too)
				dirElems := strings.Split(dir, "/")
				for i := 0; i+len(dirElems) <= len(elems); i++ {
					if matchElems(dirElems, elems[i:i+len(dirElems)]) {
						return pat
					}
				}
				continue
			}
			if ok, _ := path.Match(pat, base); ok {
				return pat
			}
		}
	}
	return ""
}

func matchElems(pat, elems []string) bool {
	for i := range pat {
		if ok, _ := path.Match(pat[i], elems[i]); !ok {
			return false
		}
	}
	return true
}

// filesOf is the session's file access: the editor's buffers first where
// the front end keeps them, else the disk.
func filesOf(env tool.Env) files.Access {
	if env.Files == nil {
		return files.Disk{}
	}
	return env.Files
}

// openFile opens a file the read tools work on, as the person sees it (its
// editor buffer when open there), with messages naming t as the model gave
// it. t has passed the path rules.
func openFile(ctx context.Context, fa files.Access, t target) (*files.File, error) {
	f, err := fa.Open(ctx, t.real)
	switch {
	case err == nil:
		return f, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s does not exist", t.disp)
	case errors.Is(err, files.ErrIsDir):
		return nil, fmt.Errorf("%s is a directory; use list_dir to see what it holds", t.disp)
	case errors.Is(err, files.ErrNotRegular):
		return nil, fmt.Errorf("%s %v", t.disp, err)
	}
	return nil, fmt.Errorf("%s: %v", t.disp, err)
}

// unwrapPathError drops the path from an *os.PathError: messages name the
// path as the model gave it.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
