//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/boundary"
)

// confinedWorkspace is a workspace with a git folder, its kin home and a
// sandbox confining commands there (the test skips without one).
func confinedWorkspace(t *testing.T) (root, home string, sb *Sandbox) {
	t.Helper()
	root, _ = filepath.EvalSymlinks(t.TempDir())
	if err := os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n"), 0o644)
	os.WriteFile(filepath.Join(root, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	home = t.TempDir()
	sb = New(Config{Hidden: []string{home}, Cache: filepath.Join(home, "cache"), RunDir: filepath.Join(home, "run")})
	if st := sb.Status(); !st.Confined {
		if os.Getenv("KIN_REQUIRE_BWRAP") == "1" {
			t.Fatalf("KIN_REQUIRE_BWRAP=1 but commands cannot be confined: %s", st.Reason)
		}
		t.Skip(st.Reason)
	}
	return root, home, sb
}

// workspacePolicy builds a command's policy as kin does, the walk
// included.
func workspacePolicy(t *testing.T, sb *Sandbox, root, home string) Policy {
	t.Helper()
	ws, err := boundary.NewWorkspace([]string{root}, home)
	if err != nil {
		t.Fatal(err)
	}
	return sb.For([]string{root}, false, ws.Protect(sb.Extra([]string{root})), ws.Secrets().Hidden())
}

// workspaceCommand builds a command's policy as kin does (the walk
// included) and the command running script under it.
func workspaceCommand(t *testing.T, sb *Sandbox, root, home, script string) (*exec.Cmd, func()) {
	t.Helper()
	return commandUnder(t, sb, workspacePolicy(t, sb, root, home), root, script)
}

func commandUnder(t *testing.T, sb *Sandbox, p Policy, root, script string) (*exec.Cmd, func()) {
	t.Helper()
	cmd, cleanup, err := sb.Command(p, root, os.Environ(), "/bin/sh", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	return cmd, cleanup
}

// A command whose policy was built while another command's placeholders
// stood (it sees them as existing, empty folders) keeps them read-only
// after that other command ended: they are not removed under it (which
// would take its mounts away and let it create what they protect).
func TestPlaceholdersOutliveTheCommandThatMadeThem(t *testing.T) {
	root, home, sb := confinedWorkspace(t)
	// the first command runs until the test closes its input (a fixed
	// 0.4 s could be over, on a loaded machine, before the test looked)
	first, endFirst := workspaceCommand(t, sb, root, home, "read x")
	goOn, err := first.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer goOn.Close()
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	agents := filepath.Join(root, "AGENTS.md")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Lstat(agents); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no placeholder for AGENTS.md while the first command ran")
		}
	}
	second, endSecond := workspaceCommand(t, sb, root, home,
		"sleep 1; echo planted > AGENTS.md; mkdir -p .github/workflows && echo planted > .github/workflows/x.yml; echo planted > .git/info; echo planted > .git/commondir; true")
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	goOn.Close()
	first.Wait()
	endFirst()
	second.Wait()
	endSecond()
	Settle()
	for _, p := range []string{"AGENTS.md", ".github", ".git/info", ".git/commondir"} {
		if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
			b, _ := os.ReadFile(filepath.Join(root, p))
			t.Errorf("%s is there after both commands ended: %q", p, b)
		}
	}
}

// planted are paths that must not be created in a workspace with a .git
// folder (a sample of the boundary's list, each behind a placeholder), and
// plant is a script trying to create every one.
var planted = []string{".mcp.json", ".vscode/tasks.json", ".claude/settings.json", ".github/workflows/ci.yml", ".husky/pre-commit",
	".gitmodules", ".envrc", "AGENTS.md", "CLAUDE.md", ".git/info/attributes", ".git/modules/x/config", ".git/config.worktree", ".git/commondir"}

func plant() string {
	var script []string
	for _, p := range planted {
		script = append(script, fmt.Sprintf("( mkdir -p %s; echo planted > %s ) 2>/dev/null", filepath.Dir(p), p))
	}
	return strings.Join(script, "; ") + "; true"
}

// leftovers lists what of planted (its first component in the workspace,
// or in .git) is on disk: after the settle point, neither a placeholder
// nor anything a command made may be there.
func leftovers(root string) []string {
	var out []string
	for _, p := range planted {
		parts := strings.SplitN(p, "/", 3)
		first := parts[0]
		if first == ".git" {
			first += "/" + parts[1]
		}
		if _, err := os.Lstat(filepath.Join(root, first)); err == nil {
			out = append(out, first)
		}
	}
	return out
}

// A command's placeholders are removed after its result (in the
// background), and never outlive the settle point; neither does this
// process's marker.
func TestPlaceholdersGoByTheSettlePoint(t *testing.T) {
	root, home, sb := confinedWorkspace(t)
	cmd, end := workspaceCommand(t, sb, root, home, "test -d AGENTS.md && test -d .git/info")
	if err := cmd.Run(); err != nil {
		t.Fatalf("no placeholders while the command ran: %v", err)
	}
	end()
	Settle()
	if left := leftovers(root); len(left) > 0 {
		t.Errorf("left after the settle point: %v", left)
	}
	markers, _ := filepath.Glob(filepath.Join(home, "run", "placeholders", "*", "*"))
	if len(markers) > 0 {
		t.Errorf("markers left: %v", markers)
	}
	placeholders.Lock()
	defer placeholders.Unlock()
	if len(placeholders.keys) > 0 || len(placeholders.paths) > 0 || placeholders.pending > 0 {
		t.Errorf("still held: %v %v, %d pending", placeholders.keys, placeholders.paths, placeholders.pending)
	}
}

// A command started right after another ended (its release still in
// flight) is fully protected: whether its walk ran after that command
// ended or while it still ran (then it saw the placeholders standing, and
// they are gone by the time it starts).
func TestCommandRightAfterAnotherIsProtected(t *testing.T) {
	root, home, sb := confinedWorkspace(t)
	for i := range 6 {
		first, endFirst := workspaceCommand(t, sb, root, home, "true")
		if err := first.Start(); err != nil {
			t.Fatal(err)
		}
		var p Policy
		if i%2 == 1 {
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
				if _, err := os.Lstat(filepath.Join(root, "AGENTS.md")); err == nil || time.Now().After(deadline) {
					break
				}
			}
			p = workspacePolicy(t, sb, root, home) // the walk sees the placeholders
		}
		first.Wait()
		endFirst() // no settle: the next command comes at once
		if i%2 == 0 {
			p = workspacePolicy(t, sb, root, home)
		}
		second, endSecond := commandUnder(t, sb, p, root, plant())
		if err := second.Run(); err != nil {
			t.Fatal(err)
		}
		endSecond()
		Settle()
		if left := leftovers(root); len(left) > 0 {
			t.Fatalf("round %d: on disk after both commands: %v", i, left)
		}
	}
}

// Commands running at once, each trying to create every protected path:
// none succeeds, none has a placeholder taken from under it by another's
// release, and nothing stays behind.
func TestConcurrentCommandsKeepTheirPlaceholders(t *testing.T) {
	root, home, sb := confinedWorkspace(t)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 3 {
				ws, err := boundary.NewWorkspace([]string{root}, home)
				if err != nil {
					errs <- err
					return
				}
				p := sb.For([]string{root}, false, ws.Protect(sb.Extra([]string{root})), ws.Secrets().Hidden())
				cmd, end, err := sb.Command(p, root, os.Environ(), "/bin/sh", "-c", fmt.Sprintf("sleep 0.%d; %s", (g+i)%4, plant()))
				if err != nil {
					errs <- err
					return
				}
				if err := cmd.Run(); err != nil {
					errs <- err
				}
				end()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	Settle()
	if left := leftovers(root); len(left) > 0 {
		t.Errorf("on disk after every command ended: %v", left)
	}
}
