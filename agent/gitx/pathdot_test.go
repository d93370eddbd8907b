//go:build unix

package gitx_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kin-dev/kin/agent/gitx"
	"github.com/kin-dev/kin/agent/gitx/gitxtest"
)

// The attack: the person's PATH has an empty or relative entry (a
// trailing colon, "."), which git, like a shell, takes as the folder it
// runs in: the work tree's top. The repository brings executables named
// cat, false and true there, the programs gitx puts in place of its
// drivers (a filter's clean is cat), and git ran the repository's own.
func TestARelativePATHEntryRunsNothingOfTheRepository(t *testing.T) {
	repo := gitxtest.Repo(t, filepath.Join(t.TempDir(), "repo"), map[string]string{"a.txt": "one\n"})
	ran := t.TempDir()
	gitxtest.Git(t, repo, "config", "filter.evil.clean", filepath.Join(ran, "never-run"))
	gitxtest.Write(t, repo, ".git/info/attributes", "* filter=evil\n")
	for _, name := range []string{"cat", "false", "true"} {
		gitxtest.Write(t, repo, name, "#!/bin/sh\ntouch "+filepath.Join(ran, "./"+name)+"\n")
		if err := os.Chmod(filepath.Join(repo, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{":" + os.Getenv("PATH"), ".:" + os.Getenv("PATH"), os.Getenv("PATH") + ":"} {
		t.Setenv("PATH", path)
		// a new file: git add runs the clean filter (gitx's cat) on it
		gitxtest.Write(t, repo, "new-"+filepath.Base(t.TempDir())+".txt", "new\n")
		for _, args := range [][]string{{"status", "--porcelain"}, {"diff"}, {"add", "-A"}} {
			if _, err := gitx.Output(context.Background(), repo, args...); err != nil {
				t.Fatalf("PATH=%s git %v: %v", path, args, err)
			}
		}
		for _, name := range gitxtest.Ran(t, ran) {
			t.Errorf("PATH=%s: the repository's %s ran", path, name)
			_ = os.Remove(filepath.Join(ran, name))
		}
	}
}
