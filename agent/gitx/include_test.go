package gitx_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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
	for _, key := range []string{"include.path", "includeIf.gitdir:/.path"} {
		t.Run(key, func(t *testing.T) { includedRewritten(t, key) })
	}
}

func includedRewritten(t *testing.T, key string) {
	repo := gitxtest.Repo(t, filepath.Join(t.TempDir(), "repo"), map[string]string{"a.txt": "one\n"})
	ran := filepath.Join(t.TempDir(), "ran")
	payload := filepath.Join(t.TempDir(), "evil.sh")
	gitxtest.Write(t, filepath.Dir(payload), "evil.sh", "#!/bin/sh\ntouch "+ran+"\ncat\n")
	if err := os.Chmod(payload, 0o755); err != nil {
		t.Fatal(err)
	}
	gitxtest.Write(t, repo, ".git/info/attributes", "* filter=evil\n")
	gitxtest.Git(t, repo, "config", key, "../shared.cfg")
	evil := "[filter \"evil\"]\n\tclean = " + payload + "\n\tsmudge = " + payload + "\n"
	defer gitx.SetAfterList(func(string) {
		gitxtest.Write(t, repo, "shared.cfg", evil)
	})()
	gitxtest.Write(t, repo, "b.txt", "new\n")
	_, err := gitx.Output(context.Background(), repo, "add", "-A")
	if _, serr := os.Stat(ran); serr == nil {
		t.Fatalf("the filter written into the included file after kin's look ran (git add: %v)", err)
	}
	if !errors.Is(err, gitx.ErrIncludes) {
		t.Errorf("git add: %v, want ErrIncludes: ", err)
		t.Error("git ran in a repository whose configuration includes a file a command can rewrite")
	}
}
