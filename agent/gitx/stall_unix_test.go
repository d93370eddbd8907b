//go:build unix

package gitx_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/gitx"
	"github.com/kin-dev/kin/agent/gitx/gitxtest"
)

// The attack: a FIFO named .gitignore or .gitattributes in a work tree
// (a repository may bring one; a session's command may make one in its
// worktree), or in place of a git folder's info/exclude. git opens them
// as they are (and a file the configuration includes), and open(2) of a
// FIFO waits for a writer for good:
// worktree/status, apply and remove, and session/new with a worktree,
// waited out their 5-minute bound and never said why. git is stopped
// soon, and the error names the file.
func TestGitStopsWhenAFIFOWouldKeepItWaiting(t *testing.T) {
	defer gitx.SetStallAfter(100 * time.Millisecond)()
	ctx := context.Background()
	for _, c := range []struct {
		name, fifo string
		args       []string
	}{
		{"ignore", "d/.gitignore", []string{"status", "--porcelain"}},
		{"attributes", ".gitattributes", []string{"add", "-A"}},
		{"attributesDiff", "d/.gitattributes", []string{"diff", "HEAD"}},
		{"exclude", ".git/info/exclude", []string{"status", "--porcelain"}},
		{"linked", "wt/d/.gitignore", []string{"status", "--porcelain"}},
		// a file the repository's configuration includes: every git
		// command reads it first
		{"include", "evil.cfg", []string{"rev-parse", "--is-inside-work-tree"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			repo := gitxtest.Repo(t, filepath.Join(base, "repo"), map[string]string{"a.txt": "a\n", "d/b.txt": "b\n"})
			gitxtest.Write(t, repo, "d/c.txt", "new\n")
			dir := repo
			if strings.HasPrefix(c.fifo, "wt/") {
				dir = filepath.Join(base, "wt")
				gitxtest.Git(t, repo, "worktree", "add", "-q", "-b", "side", dir, "HEAD")
				gitxtest.Write(t, dir, "d/c.txt", "new\n")
			}
			// a tracked file changed, so git diff reads its content (and
			// its attributes) whatever the index's timestamps say
			gitxtest.Write(t, dir, "d/b.txt", "changed\n")
			if c.name == "include" {
				gitxtest.Git(t, dir, "config", "include.path", "../evil.cfg")
			}
			fifo := filepath.Join(dir, strings.TrimPrefix(c.fifo, "wt/"))
			_ = os.Remove(fifo)
			if err := os.MkdirAll(filepath.Dir(fifo), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Skip(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := gitx.Output(ctx, dir, c.args...)
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, gitx.ErrWaitsOnFIFO) || !strings.Contains(err.Error(), fifo) {
					t.Errorf("git %v: %v", c.args, err)
				}
			case <-time.After(15 * time.Second):
				unblock(fifo)
				t.Fatalf("git %v waits on the FIFO %s", c.args, c.fifo)
			}
		})
	}
}

// A git that is merely slow is not stopped: looking for a FIFO finds none
// and git goes on.
func TestSlowGitIsNotStopped(t *testing.T) {
	defer gitx.SetStallAfter(50 * time.Millisecond)()
	repo := gitxtest.Repo(t, filepath.Join(t.TempDir(), "repo"), map[string]string{"a.txt": "a\n"})
	out, err := gitx.RunWith(context.Background(), repo, gitx.Input{Stdin: &slow{left: []byte("hello\n")}}, "hash-object", "--stdin")
	if err != nil || strings.TrimSpace(out) != "ce013625030ba8dba906f756967f9e9ca394464a" {
		t.Fatalf("hash-object = %q, %v", out, err)
	}
}

// slow is a reader that gives its bytes after 400 ms.
type slow struct{ left []byte }

func (s *slow) Read(p []byte) (int, error) {
	if len(s.left) == 0 {
		return 0, io.EOF
	}
	time.Sleep(400 * time.Millisecond)
	n := copy(p, s.left)
	s.left = s.left[n:]
	return n, nil
}

// unblock opens a FIFO for writing, so a reader waiting on it goes on.
func unblock(fifo string) {
	if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}

// A git that is merely slow is not stopped because the folder holds a
// FIFO it never opens: git hash-object reads no .gitignore, and a FIFO
// beside the git folder's files is no file git reads. The watch stopped
// any git running past stallAfter once such a file existed.
func TestSlowGitBesideAFIFOItDoesNotReadIsNotStopped(t *testing.T) {
	if !gitx.CanLookIntoGit() {
		t.Skip("nothing here says what a git waits on: a FIFO it may wait on is taken for one it does")
	}
	defer gitx.SetStallAfter(50 * time.Millisecond)()
	repo := gitxtest.Repo(t, filepath.Join(t.TempDir(), "repo"), map[string]string{"a.txt": "a\n"})
	for _, p := range []string{"d/.gitignore", ".git/stray"} {
		fifo := filepath.Join(repo, p)
		if err := os.MkdirAll(filepath.Dir(fifo), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Skip(err)
		}
	}
	out, err := gitx.RunWith(context.Background(), repo, gitx.Input{Stdin: &slow{left: []byte("hello\n")}}, "hash-object", "--stdin")
	if err != nil || strings.TrimSpace(out) != "ce013625030ba8dba906f756967f9e9ca394464a" {
		t.Fatalf("hash-object = %q, %v", out, err)
	}
}

// A FIFO .gitattributes with a writer that sends nothing: git opens it
// at once and then waits in read(2) for good. It is stopped too.
func TestGitStopsWhenItWaitsReadingAFIFO(t *testing.T) {
	defer gitx.SetStallAfter(100 * time.Millisecond)()
	repo := gitxtest.Repo(t, filepath.Join(t.TempDir(), "repo"), map[string]string{"a.txt": "a\n"})
	gitxtest.Write(t, repo, "d/new.txt", "new\n")
	fifo := filepath.Join(repo, ".gitattributes")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	// a reader of our own lets the writer open; git is the second reader
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	done := make(chan error, 1)
	go func() {
		_, err := gitx.Output(context.Background(), repo, "add", "-A")
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, gitx.ErrWaitsOnFIFO) || !strings.Contains(err.Error(), fifo) {
			t.Errorf("git add: %v", err)
		}
	case <-time.After(15 * time.Second):
		w.Close()
		t.Fatal("git add waits reading the FIFO")
	}
}
