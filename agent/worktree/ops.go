package worktree

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/gitx"
)

// File is one path the worktree changed since its base.
type File struct {
	Path string `json:"path"`
	// Status is added, modified, deleted or typeChanged.
	Status string `json:"status"`
}

// Status is a worktree's state.
type Status struct {
	Info
	// Files are the changes since the base, committed or not.
	Files []File
	// Ahead counts the worktree branch's commits since the base, Behind
	// the original branch's; Uncommitted says there are changes not
	// committed in the worktree.
	Ahead, Behind int
	Uncommitted   bool
	// Unapplied says the worktree holds changes the original checkout has
	// not been given (by worktree/apply) in this state.
	Unapplied bool
}

// Gone refuses, as KindMissing and saying why, a worktree whose folder is
// gone: taken by another session's forced worktree/remove, or deleted
// outside kin. Either way the session's tools have nothing to work on.
// nil while the folder is there.
func Gone(info Info) error {
	if info.RemovedBy != "" {
		return refuse(KindMissing, "the worktree %s is gone: session %s removed it (worktree/remove with force) while this session still worked in it; worktree/remove clears it from this session", info.Path, info.RemovedBy)
	}
	if fi, err := os.Stat(info.Path); err != nil || !fi.IsDir() {
		return refuse(KindMissing, "the worktree %s is gone (deleted outside kin?); worktree/remove clears it from this session", info.Path)
	}
	return nil
}

// snapshot is the worktree's whole content as a tree (committed and
// uncommitted changes, untracked files that are not ignored), made in a
// temporary index so the worktree's own index is left alone.
func snapshot(ctx context.Context, info Info) (string, error) {
	if err := Gone(info); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "kin-worktree-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	in := gitx.Input{Index: filepath.Join(dir, "index")}
	if _, err := gitx.RunWith(ctx, info.Path, in, "read-tree", "HEAD"); err != nil {
		return "", err
	}
	// git add asks every checked-out submodule whether it is dirty by
	// running git status inside it, and that git reads the submodule's own
	// configuration (a filter driver), which gitx neutralises only for
	// the repository it runs in. A command in the session can make such a
	// submodule, so add passes the submodules by, and update-index, which
	// reads only where their HEAD is, records them (or their removal).
	links, err := gitlinks(ctx, info.Path, in)
	if err != nil {
		return "", err
	}
	add := []string{"add", "-A", "--", "."}
	for _, l := range links {
		add = append(add, ":(exclude,literal)"+l)
	}
	if _, err := gitx.RunWith(ctx, info.Path, in, add...); err != nil {
		return "", err
	}
	if len(links) > 0 {
		upd := gitx.Input{Index: in.Index, Stdin: strings.NewReader(strings.Join(links, "\x00") + "\x00")}
		if _, err := gitx.RunWith(ctx, info.Path, upd, "update-index", "--add", "--remove", "-z", "--stdin"); err != nil {
			return "", err
		}
	}
	tree, err := gitx.RunWith(ctx, info.Path, in, "write-tree")
	return strings.TrimSpace(tree), err
}

// gitlinks are the submodule paths of the index in.
func gitlinks(ctx context.Context, dir string, in gitx.Input) ([]string, error) {
	out, err := gitx.RunWith(ctx, dir, in, "ls-files", "-s", "-z")
	if err != nil {
		return nil, err
	}
	var links []string
	for _, e := range strings.Split(out, "\x00") {
		// "<mode> <object> <stage>\t<path>"
		if meta, p, ok := strings.Cut(e, "\t"); ok && strings.HasPrefix(meta, "160000 ") {
			links = append(links, p)
		}
	}
	return links, nil
}

func treeOf(ctx context.Context, dir, rev string) (string, error) {
	out, err := gitx.Output(ctx, dir, "rev-parse", "--verify", "-q", rev+"^{tree}")
	return strings.TrimSpace(out), err
}

// changed lists what differs between the base and tree.
func changed(ctx context.Context, info Info, tree string) ([]File, error) {
	out, err := gitx.Output(ctx, info.Path, "diff", "--name-status", "--no-renames", "--no-color", "--no-relative", "-z", info.Base, tree)
	if err != nil {
		return nil, err
	}
	names := map[string]string{"A": "added", "M": "modified", "D": "deleted", "T": "typeChanged"}
	var files []File
	parts := strings.Split(strings.TrimRight(out, "\x00"), "\x00")
	for i := 0; i+1 < len(parts); i += 2 {
		st := names[parts[i][:1]]
		if st == "" {
			st = "modified"
		}
		files = append(files, File{Path: parts[i+1], Status: st})
	}
	return files, nil
}

func count(ctx context.Context, dir, rng string) int {
	out, err := gitx.Output(ctx, dir, "rev-list", "--count", rng)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(out))
	return n
}

// StatusOf reports a worktree's state.
func StatusOf(ctx context.Context, info Info) (Status, error) {
	tree, err := snapshot(ctx, info)
	if err != nil {
		return Status{}, err
	}
	files, err := changed(ctx, info, tree)
	if err != nil {
		return Status{}, err
	}
	head, _ := treeOf(ctx, info.Path, "HEAD")
	st := Status{Info: info, Files: files, Uncommitted: head != tree,
		Ahead: count(ctx, info.Path, info.Base+"..HEAD")}
	if _, err := gitx.Output(ctx, info.Repo, "rev-parse", "--verify", "-q", "refs/heads/"+info.BaseBranch); err == nil {
		st.Behind = count(ctx, info.Repo, info.Base+"..refs/heads/"+info.BaseBranch)
	}
	st.Unapplied = len(files) > 0 && tree != info.Applied
	return st, nil
}

// Applied is what Apply brought into the original checkout.
type Applied struct {
	Files []File
	// RunsLater are the applied paths that make something run later
	// (boundary.RunsLater: .kin/, .github/workflows, .envrc...): worth a
	// look before they are committed.
	RunsLater []string
}

// Apply brings the worktree's changes since its base (commits and
// uncommitted ones) into the original checkout as uncommitted changes. It
// checks the whole patch first and refuses, naming the conflicting paths,
// when any part would not apply: nothing is half-applied.
func Apply(ctx context.Context, kinHome string, info Info) (Applied, error) {
	tree, err := snapshot(ctx, info)
	if err != nil {
		return Applied{}, err
	}
	files, err := changed(ctx, info, tree)
	if err != nil {
		return Applied{}, err
	}
	if len(files) == 0 {
		return Applied{Files: []File{}}, nil
	}
	// The patch goes through a private temporary file, never kin's memory:
	// held as a string (and copied for each git apply), a worktree with a
	// large file of its own (a build output, a dataset) took several times
	// its size in base85 and could end kin for want of memory.
	patch, err := os.CreateTemp("", "kin-worktree-*.patch")
	if err != nil {
		return Applied{}, err
	}
	defer func() {
		patch.Close()
		os.Remove(patch.Name())
	}()
	// The patch's form is fixed here, not by the person's or the
	// repository's configuration: diff.noprefix (or srcPrefix) made git
	// apply strip a real folder and write files elsewhere in the checkout,
	// color.ui=always made every patch unreadable; and apply.whitespace
	// (fix, error) changed or refused lines the worktree holds as they are.
	if _, err := gitx.RunWith(ctx, info.Path, gitx.Input{Stdout: patch}, "diff", "--binary", "--full-index", "--no-renames",
		"--no-color", "--no-relative", "--src-prefix=a/", "--dst-prefix=b/", info.Base, tree); err != nil {
		return Applied{}, err
	}
	from := func() (gitx.Input, error) {
		_, err := patch.Seek(0, io.SeekStart)
		return gitx.Input{Stdin: patch}, err
	}
	in, err := from()
	if err != nil {
		return Applied{}, err
	}
	if _, err := gitx.RunWith(ctx, info.Repo, in, "apply", "--check", "--binary", "-p1", "--whitespace=nowarn", "-"); err != nil {
		if gitx.ExitCode(err) < 0 {
			return Applied{}, err
		}
		e := refuse(KindConflict, "the worktree's changes do not apply to %s; nothing was changed", info.Repo)
		e.Paths = conflicts(err)
		if len(e.Paths) > 0 {
			e.Message += ": " + strings.Join(e.Paths, ", ") + " conflict"
		}
		return Applied{}, e
	}
	if in, err = from(); err != nil {
		return Applied{}, err
	}
	if _, err := gitx.RunWith(ctx, info.Repo, in, "apply", "--binary", "-p1", "--whitespace=nowarn", "-"); err != nil {
		return Applied{}, err
	}
	// every session sharing the folder now has its changes applied, so
	// each one's status says so, not only the one that asked; each record
	// as it is now (a record another kin removed meanwhile, by
	// worktree/remove or session/delete, is not made again)
	others, err := Sharers(kinHome, info)
	if err != nil {
		return Applied{}, err
	}
	for _, i := range append([]Info{info}, others...) {
		if err := update(kinHome, i.SessionID, func(rec *Info, exists bool) (bool, error) {
			if !exists {
				return false, nil
			}
			rec.Applied = tree
			return true, nil
		}); err != nil {
			return Applied{}, err
		}
	}
	out := Applied{Files: files}
	for _, f := range files {
		if f.Status != "deleted" && boundary.RunsLater(f.Path) != "" {
			out.RunsLater = append(out.RunsLater, f.Path)
		}
	}
	return out, nil
}

// applyError matches git apply's complaints that name a path. Compiled
// on first use: every kin serve links this package, few apply a worktree,
// and compiling them at start cost 52 KB and 0.6 ms of every spawn.
var applyError = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`^error: patch failed: (.+):\d+$`),
		regexp.MustCompile(`^error: (.+): (?:patch does not apply|already exists in working directory|does not exist in index|No such file or directory|wrong type|does not match index|file exists)`),
		regexp.MustCompile(`^error: affected file '(.+)' is beyond a symbolic link$`),
	}
})

// conflicts are the paths git apply --check named.
func conflicts(err error) []string {
	var ge *gitx.Error
	msg := err.Error()
	if e, ok := err.(*gitx.Error); ok {
		ge = e
		msg = ge.Stderr
	}
	seen := map[string]bool{}
	var out []string
	for _, line := range strings.Split(msg, "\n") {
		for _, re := range applyError() {
			if m := re.FindStringSubmatch(strings.TrimSpace(line)); m != nil && !seen[m[1]] {
				seen[m[1]] = true
				out = append(out, m[1])
			}
		}
	}
	sort.Strings(out)
	return out
}

// Removed is what Remove did.
type Removed struct {
	// Branch was deleted; Commit is where it pointed (git branch <name>
	// <commit> brings it back).
	Branch, Commit string
}

// Remove takes away the worktree and its branch. While it holds changes
// the original checkout has not been given, it refuses (naming them)
// unless force.
func Remove(ctx context.Context, kinHome string, info Info, force bool) (Removed, error) {
	if info.RemovedBy != "" {
		// already taken by another session's removal, branch and all (a
		// branch of that name now would be someone else's): only this
		// session's record is left to clear
		return Removed{Branch: info.Branch}, Forget(kinHome, info.SessionID)
	}
	_, statErr := os.Stat(info.Path)
	if statErr == nil && !force {
		st, err := StatusOf(ctx, info)
		if err != nil {
			return Removed{}, err
		}
		if st.Unapplied {
			e := refuse(KindUnapplied, "the worktree %s holds changes not applied to %s (apply them first, or remove with force)", info.Path, info.Repo)
			for _, f := range st.Files {
				e.Paths = append(e.Paths, f.Path)
			}
			return Removed{}, e
		}
	}
	commit, _ := gitx.Output(ctx, info.Repo, "rev-parse", "--verify", "-q", "refs/heads/"+info.Branch)
	if statErr == nil {
		if _, err := gitx.Output(ctx, info.Repo, "worktree", "remove", "--force", info.Path); err != nil {
			return Removed{}, err
		}
	}
	_, _ = gitx.Output(ctx, info.Repo, "worktree", "prune")
	out := Removed{Branch: info.Branch, Commit: strings.TrimSpace(commit)}
	if out.Commit != "" {
		if _, err := gitx.Output(ctx, info.Repo, "branch", "-D", info.Branch); err != nil {
			return Removed{}, err
		}
	}
	if err := forget(kinHome, info.SessionID); err != nil {
		return out, err
	}
	return out, nil
}

// RemoveShared is Remove for a worktree that users (the other sessions
// that still exist and work in its folder: forks, or the session it was
// made for) share. While there are any it refuses, naming them, unless
// force; forced, it removes the worktree and marks their records, so each
// of them says the worktree was removed and by whom rather than finding
// its folder silently missing.
func RemoveShared(ctx context.Context, kinHome string, info Info, force bool, users []Info) (Removed, error) {
	// a folder already gone (removed by another session, or outside kin)
	// takes nothing more from the users; their records say so already or
	// their status will
	took := info.RemovedBy == "" && Gone(info) == nil
	if len(users) > 0 && took && !force {
		ids := make([]string, 0, len(users))
		for _, u := range users {
			ids = append(ids, u.SessionID)
		}
		sort.Strings(ids)
		e := refuse(KindShared, "the worktree %s is also the folder of session %s (a fork of the same conversation, or the one it was forked from): removing it takes their files away too (remove with force to do it anyway, or delete those sessions first)", info.Path, strings.Join(ids, ", "))
		e.Sessions = ids
		return Removed{}, e
	}
	out, err := Remove(ctx, kinHome, info, force)
	if err != nil {
		return out, err
	}
	if !took {
		return out, nil
	}
	for _, u := range users {
		if err := update(kinHome, u.SessionID, func(rec *Info, exists bool) (bool, error) {
			if !exists || rec.RemovedBy != "" {
				return false, nil
			}
			rec.RemovedBy = info.SessionID
			return true, nil
		}); err != nil {
			return out, err
		}
	}
	return out, nil
}
