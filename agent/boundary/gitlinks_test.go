package boundary_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/boundary"
)

// gitIn runs git in dir with no person's or system's config.
func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@x")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("git %v: %v %s", args, err, out)
	}
}

// The attack: a repository records a submodule in its index (a gitlink)
// that its .gitmodules does not name, or names with a key git reads
// case-insensitively (Path), or after a line over 64 KiB. git status
// enters a gitlink's folder once it has a .git, whatever .gitmodules
// says, and runs git there, which reads the config that .git names
// (core.fsmonitor runs a command, outside any sandbox). Protect read only
// .gitmodules, line by line up to 64 KiB and with "path" in lowercase: a
// confined command could plant the .git of such a submodule. Now every
// gitlink of every index (versions 2 to 4, SHA-1 and SHA-256) is kept
// from being planted like a .gitmodules path.
func TestProtectGitlinksWhateverGitmodulesSays(t *testing.T) {
	for _, c := range []struct{ name, init, version string }{
		{"v2", "", "2"}, {"v3", "", "3"}, {"v4", "", "4"}, {"sha256-v4", "--object-format=sha256", "4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, _ := tree(t)
			args := []string{"init", "-q"}
			if c.init != "" {
				args = append(args, c.init)
			}
			gitIn(t, root, args...)
			gitIn(t, root, "commit", "-q", "--allow-empty", "-m", "init")
			head := ""
			if b, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output(); err == nil {
				head = strings.TrimSpace(string(b))
			}
			for _, l := range []string{"vendored", "deep/er/lib", "cased", "late"} {
				gitIn(t, root, "update-index", "--add", "--cacheinfo", "160000,"+head+","+l)
			}
			// an entry with extended flags (version 3 and up)
			write(t, filepath.Join(root, "todo.txt"), "x")
			gitIn(t, root, "add", "-N", "todo.txt")
			gitIn(t, root, "update-index", "--index-version", c.version)
			mkdirs(t, filepath.Join(root, "vendored"), filepath.Join(root, "cased"), filepath.Join(root, "late"))
			write(t, filepath.Join(root, ".gitmodules"), "[submodule \"c\"]\n\tPath = cased\n# "+strings.Repeat("x", 70<<10)+"\n[submodule \"l\"]\n\tpath = late\n")
			p := protect(t, root)
			missing := rel(root, p.Missing)
			for _, want := range []string{"vendored/.git", "deep", "cased/.git", "late/.git"} {
				if !strings.Contains(" "+missing+" ", " "+want+" ") {
					t.Errorf("%s can be planted; missing: %s", want, missing)
				}
			}
			if len(p.Gaps) != 0 {
				t.Errorf("gaps: %v", p.Gaps)
			}
		})
	}
}

// An index kin cannot read (a command may write one: the index is
// git add's) is a gap, never a reason to protect fewer submodules.
func TestProtectAnUnreadableIndexIsAGap(t *testing.T) {
	root, _ := tree(t)
	gitIn(t, root, "init", "-q")
	write(t, filepath.Join(root, ".git", "index"), "DIRC\x00\x00\x00\x02\x00\x00\x00\x05garbage")
	p := protect(t, root)
	if !strings.Contains(strings.Join(p.Gaps, "\n"), filepath.Join(root, ".git", "index")) {
		t.Fatalf("no gap names the index: %v", p.Gaps)
	}
}

// The attack: a repository names 30,000 submodules (in .gitmodules, or as
// gitlinks in its index: free to make), none checked out. Each got a
// placeholder, a mount of every command's sandbox: bubblewrap's command
// line was then too long ("argument list too long") and no command ran
// again. Past 200 the rest are a gap: the command is asked, saying why.
func TestProtectTooManySubmodulesAreAGap(t *testing.T) {
	root, _ := tree(t)
	var gm strings.Builder
	for i := range 250 {
		mkdirs(t, filepath.Join(root, "m", fmt.Sprint(i)))
		fmt.Fprintf(&gm, "[submodule \"s%d\"]\n\tpath = m/%d\n", i, i)
	}
	write(t, filepath.Join(root, ".gitmodules"), gm.String())
	p := protect(t, root)
	subs := 0
	for _, m := range p.Missing {
		if strings.HasPrefix(m, filepath.Join(root, "m")+string(filepath.Separator)) {
			subs++
		}
	}
	if subs != 200 || !strings.Contains(strings.Join(p.Gaps, "\n"), "more than 200 submodules") {
		t.Fatalf("%d placeholders for submodules; gaps: %v", subs, p.Gaps)
	}
}

// The attack on the index's cache: a confined command may write the index
// (git add does). It rewrites it in place, to the same size, with an entry
// turned into a gitlink, and sets its mtime back (touch -d): identity,
// size and mtime are as before. The ctime is not, and it decides.
func TestProtectAnIndexRewrittenWithItsOldTimesIsReadAgain(t *testing.T) {
	defer boundary.SetRacyMargin(0)()
	root, _ := tree(t)
	gitIn(t, root, "init", "-q")
	write(t, filepath.Join(root, "blob"), "x")
	out, err := exec.Command("git", "-C", root, "hash-object", "-w", "blob").Output()
	if err != nil {
		t.Skip("git hash-object:", err)
	}
	blob := strings.TrimSpace(string(out))
	index := filepath.Join(root, ".git", "index")
	indexWith := func(mode string) []byte {
		os.Remove(index)
		gitIn(t, root, "update-index", "--add", "--cacheinfo", mode+","+blob+",vendored")
		b, err := os.ReadFile(index)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	plain, linked := indexWith("100644"), indexWith("160000")
	if len(plain) != len(linked) {
		t.Skipf("the two indexes differ in size (%d, %d): this git writes them otherwise", len(plain), len(linked))
	}
	if err := os.WriteFile(index, plain, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(index, old, old); err != nil {
		t.Fatal(err)
	}
	mkdirs(t, filepath.Join(root, "vendored"))
	if p := protect(t, root); strings.Contains(rel(root, p.Missing), "vendored/.git") {
		t.Fatalf("no gitlink yet, and vendored/.git is kept: %s", rel(root, p.Missing))
	}
	f, err := os.OpenFile(index, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(linked, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(index, old, old); err != nil {
		t.Fatal(err)
	}
	if p := protect(t, root); !strings.Contains(" "+rel(root, p.Missing)+" ", " vendored/.git ") {
		t.Fatalf("the gitlink written in place is not read; vendored/.git can be planted: %s", rel(root, p.Missing))
	}
}
