//go:build unix

package builtin_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/tool"
)

// runWithin runs a prepared call and fails the test when it has not
// returned 5 seconds after its context ended.
func runWithin(t *testing.T, a *tool.Action) tool.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan tool.Result, 1)
	go func() { done <- a.Run(ctx, nil) }()
	select {
	case r := <-done:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the call still runs 5s after it was cancelled")
		return tool.Result{}
	}
}

// The attack: a command leaves a FIFO named .gitignore in a subfolder, or
// a sparse terabyte there (mkfifo and truncate -s 1T need no privilege and
// no disk). list_dir and search read every .gitignore on their way: the
// FIFO's open blocked for good, past the turn's cancel, and the terabyte
// was read whole into memory (kin died: "runtime: out of memory"). search
// of the FIFO by its path blocked the same way. Now each is passed by.
func TestWalksPassByAFIFOOrAHugeGitignore(t *testing.T) {
	root, env := workspace(t)
	files(t, root, map[string]string{"a/x.txt": "TODO a\n", "b/y.txt": "TODO b\n", "b/z.log": "TODO log\n"})
	if err := syscall.Mkfifo(filepath.Join(root, "a", ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(root, "b", ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("*.log\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Skipf("no sparse files here: %v", err)
	}
	f.Close()

	r := runWithin(t, mustPrepare(t, "list_dir", env, map[string]any{"glob": "**/*.txt"}))
	wantStatus(t, r, tool.StatusCompleted)
	wantContains(t, r.Output, "a/x.txt", "b/y.txt")

	r = runWithin(t, mustPrepare(t, "search", env, map[string]any{"pattern": "TODO"}))
	wantStatus(t, r, tool.StatusCompleted)
	wantContains(t, r.Output, "a/x.txt:1: TODO a", "b/y.txt:1: TODO b")

	r = runWithin(t, mustPrepare(t, "search", env, map[string]any{"pattern": "TODO", "path": "pipe"}))
	wantContains(t, r.Output, "no matches")
}

// The attack: a command leaves a sparse terabyte that starts with lines
// of text (a log, then truncate -s 1T: no disk), and the model
// reads it. read_file reads the whole file to count its lines: about an
// hour on the 2-core VM, and the turn's cancel did not stop it. Now the
// read ends with the call's context.
func TestReadFileOfASparseTerabyteEndsWithItsContext(t *testing.T) {
	root, env := workspace(t)
	p := filepath.Join(root, "huge.log")
	// text as far as read_file looks to tell a binary file
	files(t, root, map[string]string{"huge.log": strings.Repeat("a line of the log\n", 1000)})
	if err := os.Truncate(p, 1<<40); err != nil {
		t.Skipf("no sparse files here: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := getTool(t, "read_file", builtin.Options{}).Prepare(ctx, env, []byte(`{"path": "huge.log"}`))
		done <- err
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("read_file still reads 9s after its context ended")
	}
}

// The attack: a .gitignore (the repository's, or one a command wrote) with
// a rule of many ** and a folder chain 40 deep: every entry was matched
// against the rule by trying every way to spread the ** over its path,
// billions for one entry, so list_dir and search never ended (the walk
// looks at its context only between folders). A glob the model gives
// list_dir was matched the same way. Matching now takes time linear in
// the pattern times the path.
func TestWalksMatchManyDoubleStarsInLinearTime(t *testing.T) {
	root, env := workspace(t)
	deep := filepath.Join(root, strings.Repeat("a/", 40))
	files(t, root, map[string]string{
		".gitignore": strings.Repeat("**/a/", 12) + "b\n",
		filepath.Join(strings.Repeat("a/", 40), "x.txt"): "TODO\n",
	})
	_ = deep
	r := runWithin(t, mustPrepare(t, "list_dir", env, map[string]any{"glob": "**/x.txt"}))
	wantContains(t, r.Output, "x.txt")
	r = runWithin(t, mustPrepare(t, "search", env, map[string]any{"pattern": "TODO"}))
	wantContains(t, r.Output, "x.txt:1: TODO")
	r = runWithin(t, mustPrepare(t, "list_dir", env, map[string]any{"glob": strings.Repeat("**/a/", 12) + "b"}))
	wantContains(t, r.Output, "nothing in")
}

// A file write_file creates gets the person's umask, as a file any
// program makes does: kin created it 0644 whatever the umask (0600, then
// a Chmod to 0644, which the umask does not touch), so a person whose
// umask is 077 found the files kin made world-readable (a config with a
// token, a .env approved as such). A replaced file keeps its own mode.
func TestWriteFileNewFileHonoursUmask(t *testing.T) {
	root, env := workspace(t)
	files(t, root, map[string]string{"run.sh": "#!/bin/sh\n"})
	must(t, os.Chmod(filepath.Join(root, "run.sh"), 0o751))
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	for _, c := range []struct {
		path string
		want os.FileMode
	}{{"notes/token.txt", 0o600}, {"run.sh", 0o751}} {
		a := mustPrepare(t, "write_file", env, map[string]any{"path": c.path, "content": "x\n"})
		wantStatus(t, a.Run(context.Background(), nil), tool.StatusCompleted)
		fi, err := os.Stat(filepath.Join(root, c.path))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != c.want {
			t.Errorf("%s: mode %v, want %v", c.path, fi.Mode().Perm(), c.want)
		}
	}
}
