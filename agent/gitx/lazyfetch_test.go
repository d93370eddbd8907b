package gitx_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/gitx"
	"github.com/kin-dev/kin/agent/gitx/gitxtest"
)

// The attack: a repository that says it is a partial clone
// (extensions.partialClone) and lacks the object of a file: git fetches
// the object from the "promisor" remote the moment it needs it (a diff, a
// checkout), unasked. The repository's own configuration chooses how:
// protocol.ext.allow=always beats kin's protocol.allow=never (the more
// specific key wins) and an ext:: URL is a shell command; or, where the
// person's global configuration allows the file protocol (common since
// git 2.38.1 for submodule work), remote.<name>.uploadpack names the
// program run for a local URL. Either ran a program of the repository's
// on review/start or a worktree's session/new.
func TestALazyFetchRunsNothing(t *testing.T) {
	for _, c := range []struct {
		name   string
		config func(repo, ran string) map[string]string
		global string
	}{
		{"ext", func(repo, ran string) map[string]string {
			return map[string]string{
				"remote.origin.url":  "ext::sh -c touch% " + filepath.Join(ran, "ext"),
				"protocol.ext.allow": "always",
			}
		}, ""},
		{"uploadpack", func(repo, ran string) map[string]string {
			p := filepath.Join(repo, ".git", "up.sh")
			if err := os.WriteFile(p, []byte("#!/bin/sh\ntouch "+filepath.Join(ran, "uploadpack")+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			return map[string]string{
				"remote.origin.url":        filepath.Join(repo, ".git"),
				"remote.origin.uploadpack": p,
			}
		}, "[protocol \"file\"]\n\tallow = always\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
			if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(c.global), 0o644); err != nil {
				t.Fatal(err)
			}
			base := t.TempDir()
			repo := gitxtest.Repo(t, filepath.Join(base, "repo"), map[string]string{"a.txt": "hello\n"})
			ran := filepath.Join(base, "ran")
			if err := os.Mkdir(ran, 0o755); err != nil {
				t.Fatal(err)
			}
			blob := strings.TrimSpace(gitxtest.Git(t, repo, "rev-parse", "HEAD:a.txt"))
			if err := os.Remove(filepath.Join(repo, ".git", "objects", blob[:2], blob[2:])); err != nil {
				t.Fatal(err)
			}
			cfg := map[string]string{"core.repositoryformatversion": "1", "extensions.partialClone": "origin", "remote.origin.promisor": "true"}
			for k, v := range c.config(repo, ran) {
				cfg[k] = v
			}
			for k, v := range cfg {
				gitxtest.Git(t, repo, "config", k, v)
			}
			gitxtest.Write(t, repo, "a.txt", "changed\n")
			ctx := context.Background()
			_, _ = gitx.Output(ctx, repo, "diff", "HEAD")
			_, _ = gitx.Output(ctx, repo, "worktree", "add", "-q", "-b", "side", filepath.Join(base, "wt"), "HEAD")
			if got := gitxtest.Ran(t, ran); len(got) > 0 {
				t.Fatalf("the repository's %v ran", got)
			}
			// the control: plain git with kin's old switch (protocol.allow=never) runs it
			plain := exec.Command("git", "-c", "protocol.allow=never", "diff", "HEAD")
			plain.Dir = repo
			plain.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
			_ = plain.Run()
			if len(gitxtest.Ran(t, ran)) == 0 {
				t.Error("control: plain git fetched nothing; the fixture proves nothing")
			}
		})
	}
}
