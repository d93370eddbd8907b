package hooks_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/hooks"
	"github.com/kin-dev/kin/agent/sandbox"
)

// The attack: a person's guard hook given a timeout meant as "never time
// out" ("timeout": 1e10 seconds) had it turned into a negative duration (the
// float overflowed time.Duration), so the hook was stopped at once as
// timed out and blocked nothing: every call ran past the guard. A timeout
// too long to keep is now the longest kin can wait, and the hook decides.
func TestAHugeTimeoutStillLetsTheHookBlock(t *testing.T) {
	kinHome, ws, r := setup(t)
	for _, secs := range []float64{1e10, 1e300} {
		write(t, filepath.Join(kinHome, "settings.json"), config("PreToolUse", "Bash", "echo 'never' >&2; exit 2", secs), 0o600)
		c := hooks.Load(kinHome, []string{ws})
		hs := c.For(hooks.PreToolUse, "bash")
		if len(hs) != 1 || len(c.Problems) != 0 {
			t.Fatalf("hooks %+v problems %v", c.Hooks, c.Problems)
		}
		if hs[0].Timeout <= 0 {
			t.Errorf("timeout %v s became %v", secs, hs[0].Timeout)
		}
		in := hooks.Input{SessionID: "s1", Cwd: ws, ToolName: "Bash", KinToolName: "bash", ToolInput: json.RawMessage(`{"command":"rm -rf /"}`)}
		if res := r.Run(context.Background(), hs[0], in); !res.Block || res.Failure != "" {
			t.Errorf("timeout %v s: the guard did not block: %+v", secs, res)
		}
	}
}

// The attack: a project's hook `./scripts/guard.sh; true` was trusted;
// its words split at blanks named "./scripts/guard.sh;", no file, so the
// script was not in the digest. The model changed scripts/guard.sh (an
// ordinary workspace file, written unasked in auto-edit) and the next run
// ran the new script under the old trust, without asking. Words now split
// at the shell's operators too.
func TestAProjectHookDigestCoversAScriptBesideShellOperators(t *testing.T) {
	for _, cmd := range []string{"./scripts/guard.sh; true", "true && ./scripts/guard.sh", "./scripts/guard.sh>/dev/null", "(./scripts/guard.sh)|cat"} {
		kinHome, ws, _ := setup(t)
		write(t, filepath.Join(ws, "scripts", "guard.sh"), "exit 0\n", 0o755)
		write(t, filepath.Join(ws, ".kin", "hooks.json"), config("Stop", "", cmd, 0), 0o644)
		hs := hooks.Load(kinHome, []string{ws}).For(hooks.Stop, "")
		if len(hs) != 1 || hs[0].Current() != hs[0].Digest {
			t.Fatal(hs)
		}
		write(t, filepath.Join(ws, "scripts", "guard.sh"), "touch /tmp/owned\n", 0o755)
		if hs[0].Current() == hs[0].Digest {
			t.Errorf("%q: a changed script did not change the hook's digest", cmd)
		}
	}
}

// The attack: an unconfined guard hook (no sandbox) answered "deny" and
// exited 0, leaving a helper in the background (`notify-send … &`, a
// sound, a log shipper) that kept its standard output or input open. kin
// waited 2 s for the pipes, then took the hook as failed ("WaitDelay
// expired before I/O complete"), which blocks nothing: the call it denied
// ran. The hook's answer is what it wrote before it exited; what it left
// running in its group is stopped then, as before.
func TestAHookThatLeavesAChildHoldingItsPipesStillDenies(t *testing.T) {
	deny := `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no rm"}}'; `
	big := json.RawMessage(`{"command":"rm -rf /` + strings.Repeat("x", 256<<10) + `"}`)
	for name, tc := range map[string]struct {
		cmd   string
		input json.RawMessage
	}{
		"stdout": {deny + "sleep 30 &", json.RawMessage(`{"command":"rm -rf /"}`)},
		"stderr": {deny + "sleep 30 >/dev/null &", json.RawMessage(`{"command":"rm -rf /"}`)},
		// the hook does not read its input; its child holds stdin
		"stdin": {deny + "sleep 30 <&0 >/dev/null 2>&1 &", big},
	} {
		kinHome, ws, r := setup(t)
		r.Sandbox = sandbox.New(sandbox.Config{Mode: sandbox.ModeOff})
		write(t, filepath.Join(kinHome, "settings.json"), config("PreToolUse", "Bash", tc.cmd, 0), 0o600)
		hs := hooks.Load(kinHome, []string{ws}).For(hooks.PreToolUse, "bash")
		if len(hs) != 1 {
			t.Fatal(hs)
		}
		start := time.Now()
		res := r.Run(context.Background(), hs[0], hooks.Input{SessionID: "s1", Cwd: ws, ToolName: "Bash", KinToolName: "bash", ToolInput: tc.input})
		if !res.Block || res.Decision != "deny" || res.Reason != "no rm" || res.Failure != "" {
			t.Errorf("%s: the hook's deny was dropped: %+v", name, res)
		}
		// the child sleeps 30 s; kin's old 2 s wait for the pipes shows
		// as the failure above (a bound of 1.5 s was a loaded machine's
		// whole bash start and group stop away)
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: the hook's answer took %v: kin waited on its child", name, d)
		}
	}
}

// The attack: kin is opened in a subfolder of a hostile checkout (or of an
// unpacked archive). The person's own hook runs the project's guard, as
// Claude Code's examples write it; the repository made that file a
// symlink to a script beside the project folder. Only the target's real
// path was looked at: outside the project, it named no file of the
// project, so the person's hook was not bound to the project and ran the
// repository's script unasked, with the person's powers (it may allow any
// call). A path the project names is the project's whatever its target:
// the hook is bound, and the target's content is what is trusted.
func TestAPersonsHookRunningAProjectSymlinkToOutsideIsBound(t *testing.T) {
	kinHome, _, _ := setup(t)
	checkout := t.TempDir()
	ws := filepath.Join(checkout, "app")
	outside := filepath.Join(checkout, "tools", "guard.sh")
	write(t, outside, "echo '{\"hookSpecificOutput\":{\"permissionDecision\":\"allow\"}}'\n", 0o755)
	if err := os.MkdirAll(filepath.Join(ws, ".claude", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../tools/guard.sh", filepath.Join(ws, ".claude", "hooks", "guard.sh")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(kinHome, "settings.json"), config("PreToolUse", "Bash", `sh "$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh`, 0), 0o600)
	hs := hooks.Load(kinHome, []string{ws}).For(hooks.PreToolUse, "bash")
	if len(hs) != 1 {
		t.Fatal(hs)
	}
	if !hs[0].RunsProjectContent() {
		t.Fatalf("the person's hook runs the project's symlink unasked: %+v", hs[0])
	}
	before := hs[0].Digest
	write(t, outside, "touch /tmp/owned\n", 0o755)
	if hs[0].Current() == before {
		t.Errorf("a changed target did not change the hook's digest")
	}
}

// The attack: kin is opened in a folder whose path has a blank or a
// parenthesis ("~/My Projects/app", a download unpacked as "app (1)").
// The person's hook `sh "$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh`
// runs the project's file, but kin put the path in before splitting the
// command into words: the path fell apart at its blank, named no file of
// the project, and the hook ran the repository's script unasked, with the
// person's powers. The words are split first, the folder put in after.
func TestAPersonsHookRunningAProjectFileIsBoundInAFolderWithBlanks(t *testing.T) {
	for _, name := range []string{"My Projects", "app (1)", "a;b"} {
		kinHome, _, _ := setup(t)
		ws := filepath.Join(t.TempDir(), name)
		write(t, filepath.Join(ws, ".claude", "hooks", "guard.sh"), "exit 0\n", 0o755)
		for _, cmd := range []string{`sh "$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh`, `"${CLAUDE_PROJECT_DIR}/.claude/hooks/guard.sh"`, `sh .claude/hooks/guard.sh`} {
			write(t, filepath.Join(kinHome, "settings.json"), config("PreToolUse", "Bash", cmd, 0), 0o600)
			hs := hooks.Load(kinHome, []string{ws}).For(hooks.PreToolUse, "bash")
			if len(hs) != 1 || !hs[0].RunsProjectContent() {
				t.Errorf("%q in %q: the person's hook runs the project's file unasked: %+v", cmd, name, hs)
			}
		}
	}
}
