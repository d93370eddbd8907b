package gitx_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/gitx"
	"github.com/kin-dev/kin/agent/gitx/gitxtest"
)

// The attack: a repository's own configuration names, under every key git
// takes a program from, a program of the repository's, and asks for the
// signatures of its commits to be checked whenever a log is shown
// (log.showSignature); its commits carry an x509, an SSH and an OpenPGP
// signature. gitx switched off gpg.program (which covers OpenPGP) but not
// gpg.x509.program or gpg.ssh.program: git show or git log through gitx
// ran the repository's program to check the signature (and, since that
// program is now false, which exits before git wrote the commit to it,
// git died of SIGPIPE: log.showSignature is switched off). Every command
// kin runs, in the repository and in a worktree of it, runs none of them.
func TestNoProgramKeyOfTheRepositoryRuns(t *testing.T) {
	base := t.TempDir()
	repo := gitxtest.Repo(t, filepath.Join(base, "repo"), map[string]string{"a.txt": "one\n"})
	ctx := context.Background()
	// three commits, each signed in one format (git picks the program
	// from the signature's first line)
	for _, sig := range []string{"SIGNED MESSAGE", "SSH SIGNATURE", "PGP SIGNATURE"} {
		head := strings.TrimSpace(gitxtest.Git(t, repo, "rev-parse", "HEAD"))
		tree := strings.TrimSpace(gitxtest.Git(t, repo, "rev-parse", "HEAD^{tree}"))
		body := fmt.Sprintf("tree %s\nparent %s\nauthor a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\ngpgsig -----BEGIN %s-----\n abc\n -----END %s-----\n\nsigned\n", tree, head, sig, sig)
		c, err := gitx.RunWith(ctx, repo, gitx.Input{Stdin: strings.NewReader(body)}, "hash-object", "-t", "commit", "-w", "--stdin")
		if err != nil {
			t.Fatal(err)
		}
		gitxtest.Git(t, repo, "update-ref", "refs/heads/main", strings.TrimSpace(c))
	}
	ran := filepath.Join(base, "ran")
	if err := os.Mkdir(ran, 0o755); err != nil {
		t.Fatal(err)
	}
	payload := func(name string) string {
		p := filepath.Join(repo, ".git", name+".sh")
		if err := os.WriteFile(p, []byte("#!/bin/sh\ntouch "+filepath.Join(ran, name)+"\ncat\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gitxtest.Write(t, repo, ".git/allowed_signers", "")
	gitxtest.Write(t, repo, ".git/info/attributes", "* filter=evil diff=evil merge=evil\n")
	keys := []string{
		"gpg.program", "gpg.openpgp.program", "gpg.x509.program", "gpg.ssh.program", "gpg.ssh.defaultKeyCommand",
		"core.fsmonitor", "diff.external", "diff.evil.textconv", "diff.evil.command",
		"filter.evil.clean", "filter.evil.smudge", "filter.evil.process", "merge.evil.driver",
		"core.sshCommand", "credential.helper", "uploadpack.packObjectsHook", "core.askPass",
		"sequence.editor", "core.editor", "core.pager", "pager.diff", "pager.show", "pager.log",
		"remote.origin.uploadpack", "remote.origin.receivepack", "core.gitProxy", "core.alternateRefsCommand",
	}
	for _, k := range keys {
		gitxtest.Git(t, repo, "config", k, payload(k))
	}
	for k, v := range map[string]string{
		"log.showSignature":          "true",
		"gpg.ssh.allowedSignersFile": filepath.Join(repo, ".git", "allowed_signers"),
		"core.hooksPath":             filepath.Join(repo, ".git", "myhooks"),
		"protocol.ext.allow":         "always",
		"remote.origin.url":          "ext::sh -c touch% " + filepath.Join(ran, "ext"),
	} {
		gitxtest.Git(t, repo, "config", k, v)
	}
	gitxtest.Write(t, repo, ".git/myhooks/post-checkout", "#!/bin/sh\ntouch "+filepath.Join(ran, "hook")+"\n")
	if err := os.Chmod(filepath.Join(repo, ".git/myhooks/post-checkout"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitxtest.Write(t, repo, "a.txt", "two\n")

	wt := filepath.Join(base, "wt")
	patch, err := gitx.Output(ctx, repo, "diff", "--binary", "HEAD")
	if err != nil || !strings.Contains(patch, "+two") {
		t.Fatalf("git diff: %v %q", err, patch)
	}
	for _, c := range []struct {
		dir  string
		args []string
	}{
		{repo, []string{"status", "--porcelain"}},
		{repo, []string{"diff"}},
		{repo, []string{"show", "HEAD"}},
		{repo, []string{"log", "-3", "HEAD"}},
		{repo, []string{"worktree", "add", "-q", "-b", "side", wt, "HEAD"}},
		{wt, []string{"apply", "--binary", "-"}},
		{wt, []string{"add", "-A"}},
		{wt, []string{"diff", "--cached"}},
		{repo, []string{"worktree", "remove", "--force", wt}},
	} {
		if _, err := gitx.RunWith(ctx, c.dir, gitx.Input{Stdin: strings.NewReader(patch)}, c.args...); err != nil {
			t.Errorf("git %v: %v", c.args, err)
		}
	}
	// asked for, the signatures are checked with kin's programs (false,
	// which exits before git has written the commit to it: git may die
	// of SIGPIPE, so the error is not looked at)
	_, _ = gitx.Output(ctx, repo, "log", "--show-signature", "-3", "HEAD")
	for _, name := range gitxtest.Ran(t, ran) {
		t.Errorf("the repository's %s ran", name)
	}
	// The control: plain git shows the log and runs the signature programs.
	plain := exec.Command("git", "log", "-3", "HEAD")
	plain.Dir = repo
	plain.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_PAGER=")
	_ = plain.Run()
	got := strings.Join(gitxtest.Ran(t, ran), " ")
	if !strings.Contains(got, "gpg.x509.program") || !strings.Contains(got, "gpg.ssh.program") {
		t.Errorf("control: plain git ran %q, not both signature programs; the fixture proves nothing", got)
	}
}
