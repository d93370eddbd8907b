package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The trace holds what tools read and the model wrote (README: "to a 0600
// file"). A trace file that already exists, made by `touch` or an earlier
// tool with the usual 0644, or by another user in /tmp with 0666, was
// appended to as it was: every local user could read the session. kin
// narrows it to 0600 (or refuses a file it cannot narrow), for the log
// file as well.
func TestBinaryTraceAndLogFilesAreNarrowedTo0600(t *testing.T) {
	dir := t.TempDir()
	trace, logFile := filepath.Join(dir, "trace.jsonl"), filepath.Join(dir, "kin.log")
	for _, f := range []string{trace, logFile} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(f, 0o666); err != nil { // past the umask
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	cmd := exec.Command(kinBin, "serve", "--trace", trace, "--log-file", logFile)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "KIN_HOME=" + home}
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
	cmd.Stdin = strings.NewReader("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kin serve: %v\n%s", err, out)
	}
	for _, f := range []string{trace, logFile} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s is %v after kin wrote it, want 0600", filepath.Base(f), fi.Mode().Perm())
		}
	}
	if b, _ := os.ReadFile(trace); !strings.Contains(string(b), `"initialize"`) {
		t.Errorf("the trace lacks the initialize request:\n%s", b)
	}
}
