package boundary

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Workspace is one session's folders and what lies around them: the roots
// its tools may touch (each opened once as an os.Root), kin's home and the
// person's home, whose secrets no tool reads unasked. The agent makes one
// per session and hands it to every tool call (tool.Env.Workspace).
type Workspace struct {
	roots []string // as the editor gave them, cleaned, absolute
	real  []string // the same with symlinks resolved
	// secrets are the person's credential paths and $KIN_HOME.
	secrets *Secrets
	// readable are folders outside the roots whose files read_file may
	// read (a skill's folder the session loaded: GrantRead), real.
	readable []string
}

// NewWorkspace opens (or reuses) one os.Root per root. kinHome is
// $KIN_HOME ("" for the default); relative and empty roots are ignored.
func NewWorkspace(roots []string, kinHome string) (*Workspace, error) {
	w := &Workspace{secrets: NewSecrets(kinHome)}
	for _, r := range roots {
		if r == "" || !filepath.IsAbs(r) {
			continue
		}
		r = filepath.Clean(r)
		real := RealPath(r)
		if _, err := register(real); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("the workspace folder %s cannot be opened: %v", r, unwrap(err))
		}
		w.roots = append(w.roots, r)
		w.real = append(w.real, real)
	}
	if len(w.roots) == 0 {
		return w, errors.New("no workspace folder is open, so there is nothing this tool may touch")
	}
	return w, nil
}

// Roots are the folders as given; Real the same with symlinks resolved.
func (w *Workspace) Roots() []string { return w.roots }

// Real are the roots with symlinks resolved.
func (w *Workspace) Real() []string { return w.real }

// Secrets are the secret paths around this workspace.
func (w *Workspace) Secrets() *Secrets { return w.secrets }

// Target is a path from a call's arguments, resolved against the roots.
type Target struct {
	// Abs is the cleaned absolute path, as asked.
	Abs string
	// Real is Abs with every symlink along its existing prefix resolved:
	// what the resolver opens (beneath its root).
	Real string
	// Disp shows the path to the model and the person: relative to the
	// first root when inside it, else absolute.
	Disp string
	// Root indexes the root holding Real (-1 when outside every root).
	Root int
	// Outside says why the path is outside the roots ("" when inside).
	Outside string
	// Granted is the folder granted for reading (GrantRead) that holds
	// the path, lexically and resolved; "" when none does. Only read_file
	// reads there: the path stays Outside for every other rule.
	Granted string
}

// Resolve turns an argument path into a Target. Relative paths are
// relative to the first root. It fails only on an empty path or "~".
func (w *Workspace) Resolve(p string) (Target, error) {
	if strings.TrimSpace(p) == "" {
		return Target{}, errors.New("the path is empty")
	}
	if strings.HasPrefix(p, "~/") || p == "~" {
		return Target{}, fmt.Errorf("path %q: ~ is not expanded; give a path relative to the workspace (%s) or an absolute one", p, w.roots[0])
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(w.roots[0], abs)
	}
	abs = filepath.Clean(abs)
	t := Target{Abs: abs, Real: RealPath(abs), Root: -1}
	t.Disp = w.Display(abs)
	lexical := -1
	for i, r := range w.roots {
		if Within(r, abs) {
			lexical = i
			break
		}
	}
	for i, r := range w.real {
		if Within(r, t.Real) {
			t.Root = i
			break
		}
	}
	if t.Root < 0 {
		for _, g := range w.readable {
			if Within(g, t.Real) && (Within(g, abs) || Within(g, RealPath(filepath.Dir(abs)))) {
				t.Granted = g
				break
			}
		}
	}
	switch {
	case lexical < 0:
		t.Root = -1
		t.Outside = fmt.Sprintf("%s is outside the workspace (%s)", p, strings.Join(w.roots, ", "))
	case t.Root < 0:
		t.Outside = fmt.Sprintf("%s resolves through a symlink to %s, outside the workspace (%s)", p, t.Real, strings.Join(w.roots, ", "))
	}
	return t, nil
}

// Display shows an absolute path relative to the first root when inside it.
func (w *Workspace) Display(abs string) string {
	if Within(w.roots[0], abs) {
		if rel, err := filepath.Rel(w.roots[0], abs); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return abs
}

// DisplayReal shows a path below real root i (rel, slash-separated) the way
// Display shows paths below root i.
func (w *Workspace) DisplayReal(i int, rel string) string {
	if i == 0 {
		return rel
	}
	return filepath.Join(w.roots[i], filepath.FromSlash(rel))
}

// DisplayRealPath shows a real path (an editor's buffer, keyed by its real
// path) the way Display shows paths: relative to its root when inside one.
func (w *Workspace) DisplayRealPath(p string) string {
	for i, r := range w.real {
		if Within(r, p) {
			if rel, err := filepath.Rel(r, p); err == nil {
				return w.DisplayReal(i, filepath.ToSlash(rel))
			}
		}
	}
	return p
}

// Rel returns the target's real path relative to its real root
// (slash-separated; "" outside the roots).
func (w *Workspace) Rel(t Target) string {
	if t.Root < 0 {
		return ""
	}
	rel, err := filepath.Rel(w.real[t.Root], t.Real)
	if err != nil || rel == "." {
		return ""
	}
	return filepath.ToSlash(rel)
}

// Secret says why the target is a secret kin reads only when the person
// asks for it ("" when it is not): see Secrets.Reason. Below a root only
// the part below it counts for name patterns, so a workspace that itself
// lives under, say, ~/.config stays usable. In a granted folder the part
// below it counts, and kin's home does not (a skill kept in
// $KIN_HOME/skills is no secret for being there; its .env still is).
func (w *Workspace) Secret(t Target) string {
	if t.Granted != "" {
		rel, _ := filepath.Rel(t.Granted, t.Real)
		return w.secrets.reasonBelow(t.Real, filepath.ToSlash(rel))
	}
	if rel, ok := w.worktreeRoot(t.Real); ok {
		return w.secrets.reasonBelow(t.Real, rel) // this session's worktree (worktree.go)
	}
	return w.secrets.Reason(t.Real, w.Rel(t))
}

// GrantRead returns a copy of the workspace whose read_file may also read
// the files of these folders (each an absolute path; symlinks resolved),
// and nothing else outside the roots: a skill's folder the session loaded
// ($KIN_HOME/skills/<name>, ~/.agents/skills/<name>). A folder that is, or
// holds, kin's home, the home folder or a credential folder is not
// granted. Each is opened as a root of its own, so a symlink inside one is
// followed only while it stays inside.
func (w *Workspace) GrantRead(dirs ...string) *Workspace {
	out := *w
	out.readable = append([]string(nil), w.readable...)
	for _, d := range dirs {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		real := RealPath(filepath.Clean(d))
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			continue
		}
		if w.secrets.kinHome != "" && Within(real, w.secrets.kinHome) || w.secrets.home != "" && Within(real, w.secrets.home) ||
			real == filepath.Dir(real) || w.secrets.credential(real) != "" {
			continue
		}
		if _, err := register(real); err != nil {
			continue
		}
		out.readable = append(out.readable, real)
	}
	return &out
}

// SecretPath is Secret for a real absolute path (an entry a walk visits).
func (w *Workspace) SecretPath(real string) string {
	if rel, ok := w.worktreeRoot(real); ok {
		return w.secrets.reasonBelow(real, rel) // this session's worktree (worktree.go)
	}
	for _, r := range w.real {
		if Within(r, real) {
			rel, _ := filepath.Rel(r, real)
			if rel == "." {
				rel = ""
			}
			return w.secrets.Reason(real, filepath.ToSlash(rel))
		}
	}
	return w.secrets.Reason(real, "")
}

// RunsLater says why a write to the target is one that makes something run
// later, outside any sandbox ("" when not): see RunsLater. Outside the
// roots the whole path counts.
func (w *Workspace) RunsLater(t Target) string {
	if t.Root < 0 {
		return RunsLater(filepath.ToSlash(t.Real))
	}
	if why := RunsLater(w.Rel(t)); why != "" {
		return why
	}
	// the path as asked, when a symlink below the root leads elsewhere
	for _, r := range w.roots {
		if Within(r, t.Abs) {
			if rel, err := filepath.Rel(r, t.Abs); err == nil && rel != "." {
				return RunsLater(filepath.ToSlash(rel))
			}
		}
	}
	return ""
}

// Notice is what a person must know when the session starts: that a root
// is their home folder or the file system's root (where their credentials
// and kin's own home are in reach of commands). "" when nothing is.
func (w *Workspace) Notice() string {
	home := w.secrets.home
	for i, r := range w.real {
		switch {
		case r == "/" || r == filepath.VolumeName(r)+string(filepath.Separator):
			return fmt.Sprintf("This session's folder %s is the file system's root. kin's tools do not read $KIN_HOME or your credentials (~/.ssh, ~/.aws, keys, .env files) unless you approve each read, but an approved command can read everything you can, and a confined one may change everything below %s that is not read-only to it.", w.roots[i], w.roots[i])
		case home != "" && r == home:
			return fmt.Sprintf("This session's folder %s is your home folder. kin's tools do not read $KIN_HOME or your credentials (~/.ssh, ~/.aws, ~/.config/gh, ~/.netrc, keys, .env files) unless you approve each read, and confined commands cannot see them; but an unconfined command can, and a confined one may change everything else in your home folder. Open a project folder instead where you can.", w.roots[i])
		case Within(r, w.secrets.kinHome):
			return fmt.Sprintf("This session's folder %s holds kin's home (%s: settings, keys, sessions). kin's tools do not read it unless you approve each read, and confined commands cannot see it.", w.roots[i], w.secrets.kinHome)
		}
	}
	return ""
}
