//go:build linux

package chat_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/reaper"
)

// The same screen in a real terminal emulator, tmux (where it is
// installed): an answer that streams while a line is typed, on a narrow
// window where it wraps, reads as one answer above the prompt, as the
// test terminal (vt_test.go) says it does.
func TestBinaryEditorInTmux(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("KIN_REQUIRE_TMUX") != "" {
			t.Fatal("KIN_REQUIRE_TMUX is set and there is no tmux")
		}
		t.Skip("no tmux here")
	}
	e := newEnv(t)
	hold := make(chan struct{})
	e.Model.Script(modeltest.Reply{Text: []string{"0123456789012345678901234", "abcdef and the rest."}, Hold: hold})
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	tm := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	cmd := []string{"env", "-i"}
	for _, kv := range e.binEnv() {
		cmd = append(cmd, kv)
	}
	cmd = append(cmd, "TERM=tmux-256color", kin(t), "chat")
	tm(append([]string{"-f", "/dev/null", "new-session", "-d", "-x", "30", "-y", "20", "-c", e.WS}, cmd...)...)
	// kill-server hangs kin chat up and returns at once; kin chat then ends
	// its service and waits for it, and the service writes the session
	// and the day's usage into KIN_HOME as it ends: the test's TempDir is
	// removed once they are all gone, not while they write ("directory
	// not empty").
	chat, err := strconv.Atoi(strings.TrimSpace(tm("display-message", "-p", "-t", "0", "#{pane_pid}")))
	if err != nil {
		t.Fatalf("tmux's pane pid: %v", err)
	}
	t.Cleanup(func() {
		started := append([]int{chat}, reaper.Descendants(chat)...)
		_ = exec.Command(tmux, "-S", sock, "kill-server").Run()
		awaitGone(t, started)
	})
	screen := func() string { return tm("capture-pane", "-p", "-J") }
	until := func(what string, ok func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(timeout)
		for !ok(screen()) {
			if time.Now().After(deadline) {
				t.Fatalf("tmux never showed %s:\n%s", what, screen())
			}
			time.Sleep(20 * time.Millisecond) // tmux tells nothing when its screen changes
		}
	}
	has := func(s string) func(string) bool { return func(sc string) bool { return strings.Contains(sc, s) } }
	until("the prompt", has("You> "))
	tm("send-keys", "-t", "0", "-l", "go")
	tm("send-keys", "-t", "0", "Enter")
	until("the first delta", has("0123456789012345678901234"))
	tm("send-keys", "-t", "0", "-l", "typed")
	until("the typed line", has("[working] You> typed"))
	close(hold)
	until("the whole answer and the line after it", has("You> typed"))
	// -J joins wrapped rows: the answer is one line, whole, once the turn
	// ended. One capture is checked for both (never one capture awaited
	// and another asserted on).
	until("the turn's end with the answer whole on one line", func(s string) bool {
		return !strings.Contains(s, "[working]") && strings.Contains(s, "Assistant> 0123456789012345678901234abcdef and the rest.\n")
	})
}
