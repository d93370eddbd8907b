//go:build unix

package review

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/gitx/gitxtest"
)

// A repository that brings a FIFO named .gitignore or .gitattributes makes
// git wait for a writer forever; the review says so within its bound
// instead of never starting.
func TestReviewDoesNotHangOnAFIFOGitFile(t *testing.T) {
	for _, name := range []string{".gitattributes", ".gitignore"} {
		t.Run(name, func(t *testing.T) {
			dir := repo(t)
			gitxtest.Write(t, dir, "calc.go", calc+"\n// changed\n")
			if err := syscall.Mkfifo(filepath.Join(dir, name), 0o644); err != nil {
				t.Skip(err)
			}
			old := Timeout
			Timeout = time.Second
			defer func() { Timeout = old }()
			done := make(chan error, 1)
			go func() {
				_, err := Compute(context.Background(), dir, Target{Uncommitted: true})
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "FIFO") {
					t.Errorf("err = %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the review's diff hangs on a FIFO", name)
			}
		})
	}
}
