package boundary_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/boundary"
)

func mkdirs(t testing.TB, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// rel shows protected paths relative to root, sorted.
func rel(root string, paths []string) string {
	var out []string
	for _, p := range paths {
		r, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(r))
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

func protect(t testing.TB, root string, extra ...string) boundary.Protection {
	t.Helper()
	ws, err := boundary.NewWorkspace([]string{root}, filepath.Join(filepath.Dir(root), "kinhome"))
	if err != nil {
		t.Fatal(err)
	}
	return ws.Protect(extra)
}

// A repository's .git is protected by an allow-list: what git add, commit
// and fetch write stays writable (and .git is pinned), everything else that
// exists is read-only, and what decides what git runs cannot be created.
// The rest of the list: existing entries read-only, missing ones
// impossible to create.
func TestProtectGitByAllowList(t *testing.T) {
	root, _ := tree(t)
	git := exec.Command("git", "init", "-q", root)
	if out, err := git.CombinedOutput(); err != nil {
		t.Skipf("git: %v %s", err, out)
	}
	write(t, filepath.Join(root, ".vscode", "tasks.json"), "{}")
	write(t, filepath.Join(root, ".env"), "K=v")
	write(t, filepath.Join(root, "pkg", "deep", "AGENTS.md"), "x")
	write(t, filepath.Join(root, "pkg", "deep", ".env.local"), "K=v")
	p := protect(t, root)
	ro := rel(root, p.ReadOnly)
	for _, want := range []string{".git/config", ".git/hooks", ".git/info", ".git/description", ".vscode", ".env", "pkg/deep/AGENTS.md", "pkg/deep/.env.local"} {
		if want == ".git/description" {
			if strings.Contains(ro, want) {
				t.Errorf("writable git entry %s is read-only", want)
			}
			continue
		}
		if !strings.Contains(" "+ro+" ", " "+want+" ") {
			t.Errorf("%s not read-only: %s", want, ro)
		}
	}
	for _, w := range []string{".git/objects", ".git/refs", ".git/HEAD", ".git/index"} {
		if strings.Contains(" "+ro+" ", " "+w+" ") {
			t.Errorf("%s is read-only", w)
		}
	}
	missing := rel(root, p.Missing)
	if got := p.Seeded[filepath.Join(root, ".git", "commondir")]; got != filepath.Join(root, ".git")+"\n" {
		t.Errorf("commondir is not seeded with the git folder itself: %q", got)
	}
	for _, want := range []string{".git/gitdir", ".git/config.worktree", ".git/modules", ".kin", ".mcp.json", ".claude", ".agents", ".idea", ".github", ".husky", ".gitmodules", ".envrc", "AGENTS.md", "CLAUDE.md"} {
		if !strings.Contains(" "+missing+" ", " "+want+" ") {
			t.Errorf("%s can be created: %s", want, missing)
		}
	}
	if rel(root, p.Pins) != ".git" || len(p.Gaps) != 0 {
		t.Errorf("pins %v gaps %v", p.Pins, p.Gaps)
	}
	// a commondir naming the git folder itself stands (another command's
	// seed, maybe another kin's): seeded still, so it is written again,
	// never made a placeholder, should it go before the command starts;
	// one naming anything else (or a symlink) is read-only
	commondir := filepath.Join(root, ".git", "commondir")
	write(t, commondir, filepath.Join(root, ".git")+"\n")
	if q := protect(t, root); q.Seeded[commondir] != filepath.Join(root, ".git")+"\n" {
		t.Errorf("a standing seed is not seeded: %v", q.Seeded)
	}
	write(t, commondir, "../..\n")
	if q := protect(t, root); q.Seeded[commondir] != "" || !strings.Contains(" "+rel(root, q.ReadOnly)+" ", " .git/commondir ") {
		t.Errorf("a commondir of the person's: seeded %v, read-only %s", q.Seeded, rel(root, q.ReadOnly))
	}
	os.Remove(commondir)
	// .github exists: only workflows is missing
	mkdirs(t, filepath.Join(root, ".github"))
	if m := rel(root, protect(t, root).Missing); !strings.Contains(m, ".github/workflows") || strings.Contains(" "+m+" ", " .github ") {
		t.Errorf("missing %s", m)
	}
	// no .git at all: the folder cannot be made a repository by a command
	os.RemoveAll(filepath.Join(root, ".git"))
	if m := rel(root, protect(t, root).Missing); !strings.Contains(" "+m+" ", " .git ") {
		t.Errorf("missing %s", m)
	}
}

// Nested repositories, a worktree's .git file, submodules that are not
// checked out and a .git that is a symlink.
func TestProtectNestedWorktreeSubmoduleSymlink(t *testing.T) {
	root, outside := tree(t)
	// a nested repository
	mkdirs(t, filepath.Join(root, "vendor2", "lib", ".git", "hooks"))
	write(t, filepath.Join(root, "vendor2", "lib", ".git", "config"), "")
	// a worktree whose git folder is in the workspace
	mkdirs(t, filepath.Join(root, "main", ".git", "worktrees", "wt"))
	write(t, filepath.Join(root, "main", ".git", "config"), "")
	write(t, filepath.Join(root, "main", ".git", "worktrees", "wt", "commondir"), "../..\n")
	mkdirs(t, filepath.Join(root, "wt"))
	write(t, filepath.Join(root, "wt", ".git"), "gitdir: ../main/.git/worktrees/wt\n")
	// a submodule not checked out yet
	write(t, filepath.Join(root, ".gitmodules"), "[submodule \"dep\"]\n\tpath = third_party/dep\n\turl = https://example.com/dep\n")
	mkdirs(t, filepath.Join(root, "third_party", "dep"))
	p := protect(t, root)
	ro, missing := rel(root, p.ReadOnly), rel(root, p.Missing)
	for _, want := range []string{"vendor2/lib/.git/config", "vendor2/lib/.git/hooks", "wt/.git", "main/.git/config", "main/.git/worktrees", ".gitmodules"} {
		if !strings.Contains(" "+ro+" ", " "+want+" ") {
			t.Errorf("%s not read-only: %s", want, ro)
		}
	}
	if !strings.Contains(" "+missing+" ", " third_party/dep/.git ") {
		t.Errorf("a submodule's .git can be planted: %s", missing)
	}
	if !strings.Contains(rel(root, p.Pins), "vendor2/lib/.git") {
		t.Errorf("pins %v", p.Pins)
	}

	// .git a symlink to a git folder: its config is protected where it
	// is, and the link (which cannot be pinned) is a gap
	other, _ := tree(t)
	mkdirs(t, filepath.Join(outside, "gitdir", "hooks"))
	write(t, filepath.Join(outside, "gitdir", "config"), "")
	inside := filepath.Join(other, "realgit")
	mkdirs(t, filepath.Join(inside, "hooks"))
	write(t, filepath.Join(inside, "config"), "")
	if err := os.Symlink(inside, filepath.Join(other, ".git")); err != nil {
		t.Fatal(err)
	}
	q := protect(t, other)
	if !strings.Contains(rel(other, q.ReadOnly), "realgit/config") || len(q.Gaps) != 1 || !strings.Contains(q.Gaps[0], "is a symlink") {
		t.Errorf("symlinked .git: ro %s gaps %v", rel(other, q.ReadOnly), q.Gaps)
	}
}

// A walk cut short fails closed: the protection says so (and the command
// is then always asked), past either limit: entries (what the first walk
// of a process reads) or folders (what every later walk stats). The
// limits are lowered to a hundredth and a thousandth: the real ones take
// 200,000 files.
func TestProtectSaysWhenTheWalkIsCutShort(t *testing.T) {
	defer boundary.SetProtectLimits(boundary.ProtectMaxEntries/100, boundary.ProtectMaxFolders/1000)()
	says := func(p boundary.Protection) bool {
		return len(p.Gaps) == 1 && strings.Contains(p.Gaps[0], fmt.Sprintf("only the first %d entries or %d folders", boundary.ProtectMaxEntries/100, boundary.ProtectMaxFolders/1000))
	}
	root, _ := tree(t)
	for i := range boundary.ProtectMaxEntries / 100 / 500 { // 4 folders of 500: just over 2,000 entries
		d := filepath.Join(root, fmt.Sprintf("d%03d", i))
		mkdirs(t, d)
		for j := range 500 {
			f, err := os.Create(filepath.Join(d, fmt.Sprintf("f%03d", j)))
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
	if p := protect(t, root); !says(p) {
		t.Fatalf("past the entries: gaps %v", p.Gaps)
	}
	// dependency folders are not counted
	os.Rename(filepath.Join(root, "d000"), filepath.Join(root, "node_modules"))
	if p := protect(t, root); len(p.Gaps) != 0 {
		t.Fatalf("gaps with node_modules skipped: %v", p.Gaps)
	}
	// nor are their folders, but every other folder is, however few its entries
	for i := range 25 {
		mkdirs(t, filepath.Join(root, "node_modules", fmt.Sprintf("m%02d", i)))
	}
	if p := protect(t, root); len(p.Gaps) != 0 {
		t.Fatalf("gaps with folders in node_modules: %v", p.Gaps)
	}
	for i := range 20 - 4 { // with the root and the three left: 20 folders, the limit
		mkdirs(t, filepath.Join(root, "d001", fmt.Sprintf("sub%02d", i)))
	}
	if p := protect(t, root); len(p.Gaps) != 0 {
		t.Fatalf("gaps at the folders' limit: %v", p.Gaps)
	}
	mkdirs(t, filepath.Join(root, "d002", "one-more"))
	if p := protect(t, root); !says(p) {
		t.Fatalf("past the folders: gaps %v", p.Gaps)
	}
}

// The attack: a repository commits .github as a symlink to ci/ (git keeps
// symlinks), with ci/workflows in it. The walk looked at
// .github/workflows only at its last name, found a folder and kept it
// (ci/workflows) read-only; the link above it is no mount, so a command
// could remove it, make .github/workflows a real folder and put a
// workflow there. A symlink anywhere along a protected path is a gap, as
// one at its end is.
func TestProtectASymlinkAlongAProtectedPathIsAGap(t *testing.T) {
	root, _ := tree(t)
	write(t, filepath.Join(root, "ci", "workflows", "ci.yml"), "on: push\n")
	if err := os.Symlink("ci", filepath.Join(root, ".github")); err != nil {
		t.Fatal(err)
	}
	p := protect(t, root)
	if !strings.Contains(strings.Join(p.Gaps, "\n"), filepath.Join(root, ".github")+" is a symlink") {
		t.Fatalf("no gap for the symlinked .github: %v", p.Gaps)
	}
	// (the sandbox resolves it: ci/workflows is what it binds read-only)
	if !strings.Contains(" "+rel(root, p.ReadOnly)+" ", " .github/workflows ") {
		t.Errorf("what it leads to is not read-only: %s", rel(root, p.ReadOnly))
	}
}
