package acp

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/rpc"
)

// ACP's session/new takes a worktree in _meta.kin.worktree, answers with
// it in _meta, and the session's folder is the worktree; a folder that is
// not a repository is kin's -32020 with its kind.
func TestSessionNewWithAWorktree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	w := newWorld(t)
	w.write("a.txt", "x\n")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "x"}} {
		cmd := exec.Command("git", append([]string{"-c", "core.hooksPath=" + os.DevNull}, args...)...)
		cmd.Dir = w.ws
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	c := w.connect(nil)
	defer c.close()
	c.initialize(map[string]any{})
	var res NewSessionResponse
	c.call(MethodSessionNew, map[string]any{"cwd": w.ws, "mcpServers": []any{}, "_meta": map[string]any{"kin": map[string]any{"worktree": map[string]any{"branch": "acp/try"}}}}, &res)
	kin, _ := res.Meta["kin"].(map[string]any)
	wt, _ := kin["worktree"].(map[string]any)
	if wt == nil || wt["branch"] != "acp/try" || !strings.HasPrefix(wt["path"].(string), filepath.Join(w.home, "worktrees")) {
		t.Fatalf("_meta = %v", res.Meta)
	}
	if b, err := os.ReadFile(filepath.Join(wt["path"].(string), "a.txt")); err != nil || string(b) != "x\n" {
		t.Errorf("worktree checkout: %q %v", b, err)
	}
	err := c.tryCall(MethodSessionNew, map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}, "_meta": map[string]any{"kin": map[string]any{"worktree": true}}}, nil)
	if re, ok := err.(*jsonrpc2.Error); !ok || re.Code != rpc.CodeWorktree || !strings.Contains(string(*re.Data), "notRepository") {
		t.Errorf("not a repository: %v", err)
	}
	// without _meta: no worktree
	var plain NewSessionResponse
	c.call(MethodSessionNew, map[string]any{"cwd": w.ws, "mcpServers": []any{}}, &plain)
	if plain.Meta != nil {
		t.Errorf("a plain session's _meta = %v", plain.Meta)
	}
}
