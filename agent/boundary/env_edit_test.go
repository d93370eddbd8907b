package boundary_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kin-dev/kin/agent/boundary"
)

// TestModelKeysStayStrippedWhileSettingsAreEdited: kin runs with a model
// whose key is in LOCAL_KEY (its apiKeyEnv); the person edits
// settings.json while it runs. Editors save in place (truncate, then
// write), and a person mid-edit leaves a trailing comma: meanwhile the file
// is not JSON, and CommandEnv named only OPENAI_API_KEY, so the next
// command the model ran (an innocent `env`) got LOCAL_KEY's value, which
// kin still sends with every request. A key kin was told about stays
// withheld while the file cannot be read.
func TestModelKeysStayStrippedWhileSettingsAreEdited(t *testing.T) {
	kinHome := t.TempDir()
	settings := filepath.Join(kinHome, "settings.json")
	write(t, settings, `{"models":[{"id":"a","contextWindow":1000,"apiKeyEnv":"EDITED_KEY"}]}`)
	environ := []string{"PATH=/bin", "EDITED_KEY=lk-2"}
	if env := boundary.CommandEnv(environ, kinHome); slices.Contains(env, "EDITED_KEY=lk-2") {
		t.Fatalf("env %q", env)
	}
	for _, mid := range []string{"", `{"models":[{"id":"a","contextWindow":1000,"apiKeyEnv":"EDITED_KEY"},]}`} {
		if err := os.WriteFile(settings, []byte(mid), 0o600); err != nil {
			t.Fatal(err)
		}
		if env := boundary.CommandEnv(environ, kinHome); slices.Contains(env, "EDITED_KEY=lk-2") {
			t.Errorf("with settings.json %q mid-edit, a command gets the model key: %q", mid, env)
		}
		if !boundary.IsModelKey("EDITED_KEY", kinHome) {
			t.Errorf("with settings.json %q mid-edit, EDITED_KEY is no model key", mid)
		}
	}
}
