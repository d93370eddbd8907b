package gitx_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/gitx"
	"github.com/kin-dev/kin/agent/gitx/gitxtest"
)

// The attack: the repository's configuration (read-only to a session's
// commands) includes a file in the work tree (writable to them). kin
// lists the configuration's program-naming keys, then git reads the
// configuration again; a command that writes a filter driver into the
// included file between the two slips it past the overrides, and git
// runs it on git add.
func TestIncludedConfigRewrittenAfterTheLookRunsNothing(t *testing.T) {
	for _, key := range []string{"include.path", "includeIf.gitdir:/.path", "worktree:include.path"} {
		// the included file missing at the look, or one git cannot
		// parse (a look that fails must not let git run unwatched)
		for _, before := range []string{"", "[broken\n"} {
			t.Run(key+"/"+strings.TrimSpace(before), func(t *testing.T) { includedRewritten(t, key, before) })
		}
	}
}

func includedRewritten(t *testing.T, key, before string) {
	repo := gitxtest.Repo(t, filepath.Join(t.TempDir(), "repo"), map[string]string{"a.txt": "one\n"})
	ran := filepath.Join(t.TempDir(), "ran")
	payload := filepath.Join(t.TempDir(), "evil.sh")
	gitxtest.Write(t, filepath.Dir(payload), "evil.sh", "#!/bin/sh\ntouch "+ran+"\ncat\n")
	if err := os.Chmod(payload, 0o755); err != nil {
		t.Fatal(err)
	}
	gitxtest.Write(t, repo, ".git/info/attributes", "* filter=evil\n")
	if k, ok := strings.CutPrefix(key, "worktree:"); ok {
		// in the worktree scope (config.worktree) instead
		gitxtest.Git(t, repo, "config", "extensions.worktreeConfig", "true")
		gitxtest.Git(t, repo, "config", "--worktree", k, "../shared.cfg")
	} else {
		gitxtest.Git(t, repo, "config", key, "../shared.cfg")
	}
	if before != "" {
		gitxtest.Write(t, repo, "shared.cfg", before)
	}
	evil := "[filter \"evil\"]\n\tclean = " + payload + "\n\tsmudge = " + payload + "\n"
	defer gitx.SetAfterList(func(string) {
		gitxtest.Write(t, repo, "shared.cfg", evil)
	})()
	gitxtest.Write(t, repo, "b.txt", "new\n")
	_, err := gitx.Output(context.Background(), repo, "add", "-A")
	if _, serr := os.Stat(ran); serr == nil {
		t.Fatalf("the filter written into the included file after kin's look ran (git add: %v)", err)
	}
	// git reading a broken include fails the look (and would fail git);
	// otherwise the include itself is refused, saying so
	if before == "" && !errors.Is(err, gitx.ErrIncludes) || err == nil {
		t.Errorf("git add in a repository whose configuration includes a file a command can rewrite: %v, want ErrIncludes", err)
	}
}
