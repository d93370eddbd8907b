//go:build unix

package settings_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/settings"
)

// within runs f and fails the test when it has not returned in five
// seconds (the goroutine is left behind: what it waits on never comes).
func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not return: it waits on the file", what)
		return nil
	}
}

// A settings.json that is a FIFO (nothing ever writes it) or a link to
// /dev/zero (endless) used to hang kin at start (every command reads it
// for the model keys), `kin login` and ACP's logout, or to eat memory
// until the process died. kin must say what is wrong with the file and go
// on, and leave it as it is.
func TestASettingsFileThatIsNotAFileIsAnErrorNotAHang(t *testing.T) {
	for name, make := range map[string]func(string) error{
		"fifo":    func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"devzero": func(p string) error { return os.Symlink("/dev/zero", p) },
		"folder":  func(p string) error { return os.Mkdir(p, 0o700) },
		"oversize": func(p string) error {
			return os.WriteFile(p, []byte(`{"model":"`+strings.Repeat("x", settings.MaxBytes)+`"}`), 0o600)
		},
	} {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			path := settings.Path(home)
			if err := make(path); err != nil {
				t.Skip(err)
			}
			before, _ := os.Lstat(path)
			err := within(t, "Load", func() error { _, err := settings.Load(home); return err })
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("Load: %v, want an error naming the file", err)
			}
			err = within(t, "SaveModel", func() error { return settings.SaveModel(home, settings.Model{APIKey: "sk-x"}) })
			if err == nil {
				t.Error("SaveModel wrote over it")
			}
			err = within(t, "ForgetKey", func() error { _, err := settings.ForgetKey(home); return err })
			if err == nil {
				t.Error("ForgetKey took it for a file")
			}
			if after, err := os.Lstat(path); err != nil || after.Mode() != before.Mode() || after.Size() != before.Size() {
				t.Errorf("the file was changed: %v %v", after, err)
			}
			if _, err := os.Stat(filepath.Join(home, "settings.json.tmp")); err == nil {
				t.Error("a temporary file was left")
			}
		})
	}
}
