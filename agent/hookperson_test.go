package agent

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/permission"
)

// personsHookRunningProjectFile is a person's UserPromptSubmit hook as
// README tells people to copy it from Claude Code: it runs a file of
// whichever project the session is in.
func personsHookRunningProjectFile() map[string]any {
	return map[string]any{"hooks": map[string]any{"UserPromptSubmit": []any{map[string]any{"hooks": []any{
		map[string]any{"type": "command", "command": `sh "$CLAUDE_PROJECT_DIR"/.claude/hooks/context.sh`}}}}}}
}

// sawText says whether any request the model got carries text.
func sawText(m *modeltest.Server, text string) bool {
	for _, r := range m.Requests() {
		if strings.Contains(r.Text(), text) {
			return true
		}
	}
	return false
}

// The person's own hook that runs a project's file runs what the
// repository wrote there: a hostile repository's .claude/hooks/context.sh
// ran, unasked, with the person's powers. It now runs only once the person
// trusts that file's content (asked as a project's hook is, the card
// naming the file), and not when declined.
func TestPersonsHookRunningAProjectFileAsksFirst(t *testing.T) {
	svc, m, rec, a, ws := hookService(t, personsHookRunningProjectFile(), permission.Deny)
	writeFile(t, filepath.Join(ws, ".claude", "hooks", "context.sh"), "echo PLANTED-CONTEXT\n")
	sid := newSession(t, svc, ws)
	m.Script(modeltest.Reply{Text: []string{"answer"}})
	if d := ask(t, svc, rec, sid, TextInput("hello")); d.Status != TurnCompleted {
		t.Fatalf("%+v", d)
	}
	if sawText(m, "PLANTED-CONTEXT") {
		t.Fatal("the person's hook ran the repository's script without asking")
	}
	if d := a.trustDetails(); !strings.Contains(d, "your hook; it runs the project's .claude/hooks/context.sh") {
		t.Errorf("the trust card shows %q", d)
	}
}

// Trusted, it runs; when the repository then changes the file, it is asked
// again and, declined, does not run.
func TestPersonsHookRunningAProjectFileRunsOnceTrustedAndAsksAgainWhenItChanges(t *testing.T) {
	svc, m, rec, _, ws := hookService(t, personsHookRunningProjectFile(), permission.Trust, permission.Deny)
	script := filepath.Join(ws, ".claude", "hooks", "context.sh")
	writeFile(t, script, "echo TRUSTED-CONTEXT\n")
	sid := newSession(t, svc, ws)
	m.Script(modeltest.Reply{Text: []string{"one"}}, modeltest.Reply{Text: []string{"two"}})
	if d := ask(t, svc, rec, sid, TextInput("hello")); d.Status != TurnCompleted {
		t.Fatalf("%+v", d)
	}
	if !sawText(m, "TRUSTED-CONTEXT") {
		t.Fatal("the trusted hook did not run")
	}
	writeFile(t, script, "echo CHANGED-CONTEXT\n")
	if d := ask(t, svc, rec, sid, TextInput("again")); d.Status != TurnCompleted {
		t.Fatalf("%+v", d)
	}
	if sawText(m, "CHANGED-CONTEXT") {
		t.Fatal("the changed script ran under the trust given to the old one")
	}
}

// The person's hook that names no file of the project runs as before,
// unasked.
func TestPersonsOwnHookRunsUnasked(t *testing.T) {
	cfg := map[string]any{"hooks": map[string]any{"UserPromptSubmit": []any{map[string]any{"hooks": []any{
		map[string]any{"type": "command", "command": "echo PERSONS-CONTEXT"}}}}}}
	svc, m, rec, a, ws := hookService(t, cfg)
	sid := newSession(t, svc, ws)
	m.Script(modeltest.Reply{Text: []string{"answer"}})
	if d := ask(t, svc, rec, sid, TextInput("hello")); d.Status != TurnCompleted {
		t.Fatalf("%+v", d)
	}
	if !sawText(m, "PERSONS-CONTEXT") {
		t.Fatal("the person's own hook did not run")
	}
	if d := a.trustDetails(); d != "" {
		t.Errorf("asked to trust %q", d)
	}
}
