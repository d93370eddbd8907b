// Package gitxtest makes git repositories for tests of code that runs git
// through gitx: a plain repository, and a hostile one whose configuration
// names programs git would run (the fixture of gitx's own test), with the
// control that shows plain git does run them.
package gitxtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kin-dev/kin/agent/gitx"
)

// Git runs git in dir through gitx, with a fixed author, failing the test
// on an error.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	full := append([]string{"-c", "user.name=kin test", "-c", "user.email=test@example.com", "-c", "commit.gpgSign=false", "-c", "init.defaultBranch=main"}, args...)
	out, err := gitx.Output(context.Background(), dir, full...)
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return out
}

// Write writes a file of a repository, making its folders.
func Write(t testing.TB, repo, name, body string) {
	t.Helper()
	p := filepath.Join(repo, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Repo is a new repository at dir (made if missing) on branch main with
// files committed as "first".
func Repo(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	Git(t, dir, "init", "-q", "-b", "main")
	for name, body := range files {
		Write(t, dir, name, body)
	}
	if len(files) > 0 {
		Git(t, dir, "add", "-A")
		Git(t, dir, "commit", "-q", "-m", "first")
	}
	return dir
}

// Hostile plants, in repo's own configuration and tree, programs git would
// run (an fsmonitor, filter, textconv and external diff drivers for every
// file, a pager, hooks: a hooks folder and a configured hook). Each
// creates a file in the returned folder if it ever runs. Call it after
// the commits the test needs.
func Hostile(t testing.TB, repo string) (ran string) {
	t.Helper()
	ran = filepath.Join(t.TempDir(), "ran")
	if err := os.MkdirAll(ran, 0o755); err != nil {
		t.Fatal(err)
	}
	payload := func(name string) string {
		p := filepath.Join(repo, ".git", name+".sh")
		if err := os.WriteFile(p, []byte("#!/bin/sh\ntouch "+filepath.Join(ran, name)+"\ncat\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	Write(t, repo, ".git/info/attributes", "* filter=evil diff=evil\n")
	for k, v := range map[string]string{
		"core.fsmonitor":      payload("fsmonitor"),
		"filter.evil.clean":   payload("clean"),
		"filter.evil.smudge":  payload("smudge"),
		"filter.evil.process": payload("process"),
		"diff.evil.textconv":  payload("textconv"),
		"diff.evil.command":   payload("diffcommand"),
		"diff.external":       payload("extdiff"),
		"core.pager":          payload("pager"),
		"core.hooksPath":      filepath.Join(repo, ".git", "myhooks"),
		// a configured hook (git 2.54 and later; older gits ignore it)
		"hook.evil.event":   "post-checkout",
		"hook.evil.command": payload("confighook"),
	} {
		Git(t, repo, "config", k, v)
	}
	Write(t, repo, ".git/myhooks/post-checkout", "#!/bin/sh\ntouch "+filepath.Join(ran, "hook")+"\n")
	return ran
}

// Ran lists the planted programs that ran.
func Ran(t testing.TB, ran string) []string {
	t.Helper()
	entries, _ := os.ReadDir(ran)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// Control runs plain git (not gitx) diff in repo and fails the test when
// none of the planted programs ran: the fixture must really be hostile.
func Control(t testing.TB, repo, ran string) {
	t.Helper()
	plain := exec.Command("git", "diff", "HEAD")
	plain.Dir = repo
	plain.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_PAGER=")
	_ = plain.Run()
	if len(Ran(t, ran)) == 0 {
		t.Error("control: plain git ran none of the planted programs; the fixture proves nothing")
	}
}
