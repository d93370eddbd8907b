package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// login runs the built binary's login with stdin (not a terminal: the key
// is read as one line).
func login(t *testing.T, home, stdin string, args ...string) (string, int) {
	t.Helper()
	return kinCLIWithInput(t, t.TempDir(), home, stdin, args...)
}

func TestLoginStoresTheKeyPrivatelyAndKeepsTheRestOfTheFile(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "settings.json")
	if err := os.WriteFile(path, []byte(`{"sandbox":"off","futureField":{"x":[1,2]},"openaiApiKey":"sk-old"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// `kin acp login` is how an ACP client runs the terminal sign-in (the
	// client appends the method's args to the configured `kin acp`).
	for _, args := range [][]string{{"login", "--model", "gpt-test"}, {"acp", "login"}} {
		out, code := login(t, home, "sk-secret-123\n", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, out)
		}
		if strings.Contains(out, "sk-secret-123") || strings.Contains(out, "sk-old") {
			t.Fatalf("%v printed the key: %s", args, out)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("settings.json mode %v, want 0600", st.Mode().Perm())
	}
	var doc map[string]any
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["openaiApiKey"] != "sk-secret-123" || doc["model"] != "gpt-test" || doc["sandbox"] != "off" {
		t.Errorf("settings.json = %s", b)
	}
	if f, _ := json.Marshal(doc["futureField"]); string(f) != `{"x":[1,2]}` {
		t.Errorf("an unknown field was not kept: %s", b)
	}
}

func TestLoginRefusesAnEmptyKeyAndAKeyAsArgument(t *testing.T) {
	home := t.TempDir()
	if out, code := login(t, home, "\n", "login"); code == 0 || !strings.Contains(out, "nothing was saved") {
		t.Errorf("empty key: exit %d: %s", code, out)
	}
	if out, code := login(t, home, "", "login", "sk-in-argv"); code != 2 || !strings.Contains(out, "never given as an argument") {
		t.Errorf("key as an argument: exit %d: %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(home, "settings.json")); !os.IsNotExist(err) {
		t.Errorf("settings.json was written: %v", err)
	}
}

// A relative KIN_HOME ("~/.kin" from an editor's or a service's env
// setting, which expands no ~; ".kin") was taken from the folder kin starts
// in, the repository for an editor's kin: as with no home at all
// (TestNoHomeNeverMakesTheRepositoryKinsHome), the repository's files were
// the person's settings, servers and trust, and kin login wrote the key
// into its working tree. kin refuses instead and writes nothing.
func TestRelativeKinHomeIsRefused(t *testing.T) {
	for _, home := range []string{"~/.kin", ".kin", "kin-home"} {
		for _, c := range []struct {
			args  []string
			stdin string
		}{{[]string{"login"}, "sk-relative-canary\n"}, {[]string{"mcp", "add", "x", "--", "node"}, ""}, {[]string{"trust", "list"}, ""}} {
			repo := t.TempDir()
			out, code := kinCLIWithInput(t, repo, home, c.stdin, c.args...)
			if code != 2 || !strings.Contains(out, "absolute path") {
				t.Errorf("KIN_HOME=%s kin %q: exit %d, want a refusal:\n%s", home, c.args, code, out)
			}
			if ents, _ := os.ReadDir(repo); len(ents) != 0 {
				t.Errorf("KIN_HOME=%s kin %q wrote into the repository: %v", home, c.args, ents)
			}
		}
	}
}
