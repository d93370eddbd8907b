package settings_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/settings"
)

// ForgetKey takes the stored key out and leaves every other field,
// unknown ones included, and the file's mode; without a key (or a file)
// it writes nothing.
func TestForgetKeyKeepsTheRest(t *testing.T) {
	home := t.TempDir()
	path := settings.Path(home)
	if err := os.WriteFile(path, []byte(`{"openaiApiKey":"sk-secret","model":"gpt-5.1","fromANewerKin":{"x":1}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	removed, err := settings.ForgetKey(home)
	if err != nil || !removed {
		t.Fatalf("ForgetKey: %v %v", removed, err)
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), "sk-secret") || !strings.Contains(string(b), `"model": "gpt-5.1"`) || !strings.Contains(string(b), "fromANewerKin") {
		t.Errorf("after ForgetKey: %s", b)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	if removed, err := settings.ForgetKey(home); err != nil || removed {
		t.Errorf("a second ForgetKey: %v %v", removed, err)
	}
	if removed, err := settings.ForgetKey(filepath.Join(home, "none")); err != nil || removed {
		t.Errorf("no file: %v %v", removed, err)
	}
	if _, err := os.Stat(filepath.Join(home, "none", "settings.json")); !os.IsNotExist(err) {
		t.Errorf("a file was made where there was none: %v", err)
	}
}
