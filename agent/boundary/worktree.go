package boundary

import (
	"os"
	"path/filepath"
)

// A session's git worktree (package agent/worktree) lives in kin's home,
// $KIN_HOME/worktrees/<session>, so the repository's own folder is never
// touched. For the session whose root it is, that folder is its workspace:
// not one of kin's secrets (the rest of $KIN_HOME still is, and the
// worktree is a secret to every other session), and commands may commit
// there, so its git folder (<repository>/.git/worktrees/<session>) and the
// repository's common git folder are writable to them, protected like any
// .git (Protect: config, hooks and the rest read-only or impossible to
// create; pinned). Tests: TestKinWorktreeIsAWorkspaceNotASecret,
// TestProtectKinWorktreeGitFolders.

// KinWorktree reports whether real (absolute, symlinks resolved) is one of
// kin's session worktrees: a folder directly in $KIN_HOME/worktrees whose
// .git is a file (a linked worktree's).
func (s *Secrets) KinWorktree(real string) bool {
	if s.kinHome == "" || filepath.Dir(real) != filepath.Join(s.kinHome, "worktrees") {
		return false
	}
	fi, err := os.Lstat(filepath.Join(real, ".git"))
	return err == nil && fi.Mode().IsRegular()
}

// worktreeRoot reports whether real lies in a root of this workspace that
// is a kin worktree, and its path relative to that root.
func (w *Workspace) worktreeRoot(real string) (string, bool) {
	for _, r := range w.real {
		if Within(r, real) && w.secrets.KinWorktree(r) {
			rel, _ := filepath.Rel(r, real)
			if rel == "." {
				rel = ""
			}
			return filepath.ToSlash(rel), true
		}
	}
	return "", false
}

// worktreeGit are the git folders of the workspace's kin worktrees: each
// one's own (in the repository's .git/worktrees) and the common one.
func (w *Workspace) worktreeGit() []string {
	var out []string
	for _, r := range w.real {
		if !w.secrets.KinWorktree(r) {
			continue
		}
		gd, _ := gitDirOf(filepath.Join(r, ".git"))
		if gd == "" || !isWorktreeGitDir(gd) {
			continue
		}
		out = append(out, gd)
		if common, _ := commonDirOf(gd); common != "" && common != gd && isGitDir(common) {
			out = append(out, common)
		}
	}
	return out
}

// isWorktreeGitDir reports whether dir looks like a linked worktree's git
// folder: HEAD and commondir.
func isWorktreeGitDir(dir string) bool {
	for _, name := range []string{"HEAD", "commondir"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}

// ReasonIn is Reason for real (absolute, symlinks resolved) inside the
// workspace root root (real too): in a root that is a kin worktree, kin's
// home does not count (that root is the session's workspace), names below
// the root do. For features that keep roots of their own (the
// instructions loader) rather than a Workspace.
func (s *Secrets) ReasonIn(root, real string) string {
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == "." {
		rel = ""
	}
	rel = filepath.ToSlash(rel)
	if s.KinWorktree(root) {
		return s.reasonBelow(real, rel)
	}
	return s.Reason(real, rel)
}
