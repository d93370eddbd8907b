package config_test

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/kin-dev/kin/mcp/config"
)

func TestCheckName(t *testing.T) {
	for _, tc := range []struct {
		name, problem string // problem "" = allowed
	}{
		{"files", ""},
		{"my server (prod)", ""},
		{"数据库", ""},
		{strings.Repeat("é", 64), ""},
		{"\xe8", "not valid UTF-8"},
		{"a\xffb", "not valid UTF-8"},
		{"\ufffd", "U+FFFD"},
		{strings.Repeat("x", 65), "65 characters"},
		{"", "empty"},
		{"  ", "empty"},
		{"a\nb", "control"},
		{"tab\tname", "control"},
		{"\x1b[31mred", "control"},
		{"files\u202e", "invisible formatting"},
		{"fi\u200bles", "invisible formatting"},
	} {
		err := config.CheckName(tc.name)
		switch {
		case tc.problem == "" && err != nil:
			t.Errorf("%q refused: %v", tc.name, err)
		case tc.problem != "" && (!errors.Is(err, config.ErrBadName) || !strings.Contains(err.Error(), tc.problem) ||
			!strings.Contains(err.Error(), "a name is 1 to 64 characters of valid UTF-8")):
			t.Errorf("%q: %v, want a refusal saying %q", tc.name, err, tc.problem)
		}
	}
}

// Whatever the name, Store.Add either refuses it with ErrBadName (writing
// nothing) or stores it so that Load finds exactly that name, a second Add
// of it is ErrExists, Remove by it succeeds and leaves nothing behind.
func FuzzStoreAddLoadRemove(f *testing.F) {
	for _, s := range []string{"files", "\xe8", "\ufffd", "a\x00b", "x\u202e", strings.Repeat("n", 64), strings.Repeat("n", 65),
		`quo"te\`, " lead", "数据库", "a.b/c", "$HOME", "${X}", "__proto__"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		home := t.TempDir()
		st := config.NewStore("", home)
		raw := []byte(`{"command":"srv","args":["--flag"]}`)
		err := st.Add(config.ScopeGlobal, name, raw)
		if config.CheckName(name) != nil {
			if !errors.Is(err, config.ErrBadName) {
				t.Fatalf("Add(%q) = %v, want ErrBadName", name, err)
			}
			if _, err := os.Stat(config.GlobalPath(home)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a refused name wrote the file: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Add(%q): %v", name, err)
		}
		cfg, err := config.Load("", home)
		if err != nil || len(cfg.Servers) != 1 || cfg.Servers[0].Name != name || len(cfg.Warnings) != 0 {
			t.Fatalf("Load after Add(%q): %v %+v", name, err, cfg)
		}
		if err := st.Add(config.ScopeGlobal, name, raw); !errors.Is(err, config.ErrExists) {
			t.Fatalf("second Add(%q) = %v, want ErrExists", name, err)
		}
		if err := st.Remove(config.ScopeGlobal, name); err != nil {
			t.Fatalf("Remove(%q): %v", name, err)
		}
		cfg, err = config.Load("", home)
		if err != nil || len(cfg.Servers) != 0 || len(cfg.Warnings) != 0 {
			t.Fatalf("Load after Remove(%q): %v %+v", name, err, cfg)
		}
		if data, _ := os.ReadFile(config.GlobalPath(home)); bytes.Contains(data, []byte("srv")) {
			t.Fatalf("the entry is still in the file: %s", data)
		}
	})
}
