package config_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kin-dev/kin/mcp/config"
)

func TestAddUpdateRemoveSetEnabled(t *testing.T) {
	workdir, home := dirs(t)
	st := config.NewStore(workdir, home)
	path := config.ProjectPath(workdir)

	steps := []struct {
		name    string
		op      func() error
		wantErr error  // nil: success
		want    string // the loaded server "name:command:disabled" list after the step
	}{
		{"add a", func() error { return st.Add(config.ScopeProject, "a", json.RawMessage(`{"command":"one"}`)) }, nil, "a:one:false"},
		{"add b", func() error { return st.Add(config.ScopeProject, "b", json.RawMessage(`{"command":"two"}`)) }, nil, "a:one:false,b:two:false"},
		{"add a again", func() error { return st.Add(config.ScopeProject, "a", json.RawMessage(`{"command":"x"}`)) }, config.ErrExists, "a:one:false,b:two:false"},
		{"add invalid", func() error {
			return st.Add(config.ScopeProject, "c", json.RawMessage(`{"command":"x","url":"https://h"}`))
		}, nil, ""},
		{"add empty name", func() error { return st.Add(config.ScopeProject, "", json.RawMessage(`{"command":"x"}`)) }, nil, ""},
		{"update a", func() error { return st.Update(config.ScopeProject, "a", json.RawMessage(`{"command":"uno"}`)) }, nil, "a:uno:false,b:two:false"},
		{"update missing", func() error { return st.Update(config.ScopeProject, "zz", json.RawMessage(`{"command":"x"}`)) }, config.ErrNotFound, "a:uno:false,b:two:false"},
		{"disable b", func() error { return st.SetEnabled(config.ScopeProject, "b", false) }, nil, "a:uno:false,b::true"},
		{"enable b", func() error { return st.SetEnabled(config.ScopeProject, "b", true) }, nil, "a:uno:false,b:two:false"},
		{"disable a, scope chosen", func() error { return st.SetEnabled("", "a", false) }, nil, "a::true,b:two:false"},
		{"enable missing", func() error { return st.SetEnabled("", "zz", true) }, config.ErrNotFound, "a::true,b:two:false"},
		{"remove a", func() error { return st.Remove(config.ScopeProject, "a") }, nil, "b:two:false"},
		{"remove missing", func() error { return st.Remove(config.ScopeProject, "a") }, config.ErrNotFound, "b:two:false"},
		{"foreign scope is not writable", func() error { return st.Add(config.ScopeForeign, "f", json.RawMessage(`{"command":"x"}`)) }, config.ErrScope, "b:two:false"},
	}
	for _, s := range steps {
		before, _ := os.ReadFile(path)
		err := s.op()
		switch {
		case s.want == "": // a validation error: some error, file untouched
			if err == nil {
				t.Fatalf("%s: no error", s.name)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Fatalf("%s: file changed on error", s.name)
			}
			continue
		case s.wantErr != nil && !errors.Is(err, s.wantErr):
			t.Fatalf("%s: err = %v, want %v", s.name, err, s.wantErr)
		case s.wantErr == nil && err != nil:
			t.Fatalf("%s: %v", s.name, err)
		}
		cfg := load(t, workdir, home, nil)
		var got []string
		for _, srv := range cfg.Servers {
			got = append(got, fmt.Sprintf("%s:%s:%v", srv.Name, srv.Command, srv.Disabled))
		}
		if strings.Join(got, ",") != s.want {
			t.Fatalf("%s: servers %v, want %s", s.name, got, s.want)
		}
	}
}

// SetEnabled without a scope edits the global entry when the project has none.
func TestSetEnabledFallsBackToGlobal(t *testing.T) {
	workdir, home := dirs(t)
	writeFile(t, config.GlobalPath(home), `{"mcpServers":{"g":{"command":"x"}}}`)
	if err := config.NewStore(workdir, home).SetEnabled("", "g", false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(config.ProjectPath(workdir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("project file created: %v", err)
	}
	if s, _ := load(t, workdir, home, nil).Server("g"); !s.Disabled {
		t.Error("global entry not disabled")
	}
}

// Unknown fields (in the entry and at top level), other entries' raw JSON
// and ${VAR} spellings survive an Update byte for byte.
func TestUpdatePreservesUnknownFieldsAndSpellings(t *testing.T) {
	workdir, home := dirs(t)
	path := config.GlobalPath(home)
	writeFile(t, path, `{
	"$schema": "https://example.com/schema.json",
	"mcpServers": {
		"a": {"command": "old", "args": ["x"], "x-note": "keep me", "nested": {"k": [1, 2.50, "<&>"]}},
		"other": {"url": "https://h/mcp?k=${KEY:-d}", "headers": {"Authorization": "Bearer ${TOKEN}"}, "esc": "\u003cb\u003e", "html": "<b>&"}
	},
	"vendorSettings": {"z": 1, "a": 2}
}`)
	st := config.NewStore(workdir, home)
	if err := st.Update(config.ScopeGlobal, "a", json.RawMessage(`{"command":"new","timeout":5,"x-extra":true}`)); err != nil {
		t.Fatal(err)
	}
	out := readFile(t, path)
	for _, want := range []string{
		`"$schema": "https://example.com/schema.json"`,
		`"x-note": "keep me"`,
		`"nested": {`, `2.50`, `"<&>"`,
		`"x-extra": true`, `"timeout": 5`, `"command": "new"`,
		`"url": "https://h/mcp?k=${KEY:-d}"`,
		`"Authorization": "Bearer ${TOKEN}"`,
		`"esc": "\u003cb\u003e"`, `"html": "<b>&"`,
		`"vendorSettings": {`, "\n    \"z\": 1,",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("file lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, `"args"`) || strings.Contains(out, `"old"`) {
		t.Errorf("known field omitted by the update was kept:\n%s", out)
	}
	if !strings.HasPrefix(out, "{\n  \"$schema\"") || strings.Index(out, `"$schema"`) > strings.Index(out, `"vendorSettings"`) {
		t.Errorf("top-level order changed:\n%s", out)
	}
	if strings.Index(out, `"a":`) > strings.Index(out, `"other":`) {
		t.Errorf("entry order changed:\n%s", out)
	}
	cfg := load(t, workdir, home, map[string]string{"TOKEN": "t"})
	if a, _ := cfg.Server("a"); a.Command != "new" || a.TimeoutMS != 5 {
		t.Errorf("reloaded a = %+v (warnings %s)", a, warningsText(cfg))
	}
}

// Add writes the entry as given: ${VAR} stays unexpanded even when set.
func TestAddKeepsVariableSpelling(t *testing.T) {
	const secret = "CANARY-add-secret"
	t.Setenv("KIN_TEST_TOKEN", secret)
	workdir, home := dirs(t)
	st := config.NewStore(workdir, home)
	entry := `{"type":"http","url":"https://h/mcp","headers":{"Authorization":"Bearer ${KIN_TEST_TOKEN}"},"env_note":"${KIN_TEST_TOKEN:-none}"}`
	if err := st.Add(config.ScopeProject, "api", json.RawMessage(entry)); err != nil {
		t.Fatal(err)
	}
	out := readFile(t, config.ProjectPath(workdir))
	if strings.Contains(out, secret) || !strings.Contains(out, `"Bearer ${KIN_TEST_TOKEN}"`) || !strings.Contains(out, `"${KIN_TEST_TOKEN:-none}"`) {
		t.Fatalf("file:\n%s", out)
	}
	cfg, err := config.Load(workdir, home) // real environment
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := cfg.Server("api"); s.Headers["Authorization"] != "Bearer "+secret {
		t.Fatalf("not expanded on load: %s", warningsText(cfg))
	}
}

func TestFileModes(t *testing.T) {
	workdir, home := dirs(t)
	home = filepath.Join(home, "fresh") // does not exist yet
	st := config.NewStore(workdir, home)
	for _, scope := range []config.Scope{config.ScopeProject, config.ScopeGlobal} {
		if err := st.Add(scope, "a", json.RawMessage(`{"command":"x"}`)); err != nil {
			t.Fatal(err)
		}
		path, _ := st.Path(scope)
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v", path, fi.Mode().Perm(), err)
		}
		if fi, err := os.Stat(filepath.Dir(path)); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: dir mode %v, %v", path, fi.Mode().Perm(), err)
		}
	}
	// An existing file with looser permissions is tightened on write.
	path := config.GlobalPath(home)
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := st.SetEnabled(config.ScopeGlobal, "a", false); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("rewritten mode %v", fi.Mode().Perm())
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 2 { // mcp.json and its .lock; no temp files
		t.Errorf("directory holds %v", ents)
	}
}

// A file that is not valid JSON is never overwritten by any write.
func TestMalformedFileIsNeverOverwritten(t *testing.T) {
	const bad = `{"mcpServers": {"a": {"command": "x"}, // a comment
}`
	ops := map[string]func(*config.Store) error{
		"add": func(st *config.Store) error {
			return st.Add(config.ScopeProject, "n", json.RawMessage(`{"command":"x"}`))
		},
		"update": func(st *config.Store) error {
			return st.Update(config.ScopeProject, "a", json.RawMessage(`{"command":"y"}`))
		},
		"remove":  func(st *config.Store) error { return st.Remove(config.ScopeProject, "a") },
		"disable": func(st *config.Store) error { return st.SetEnabled(config.ScopeProject, "a", false) },
		"adopt":   func(st *config.Store) error { return st.Adopt("f") },
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			workdir, home := dirs(t)
			writeFile(t, config.ProjectPath(workdir), bad)
			writeFile(t, config.ForeignPath(workdir), `{"mcpServers":{"f":{"command":"x"}}}`)
			err := op(config.NewStore(workdir, home))
			if !errors.Is(err, config.ErrMalformedFile) || !strings.Contains(err.Error(), config.ProjectPath(workdir)) {
				t.Errorf("err = %v, want ErrMalformedFile naming the file", err)
			}
			if got := readFile(t, config.ProjectPath(workdir)); got != bad {
				t.Errorf("malformed file was rewritten:\n%s", got)
			}
		})
	}
}

func TestAdopt(t *testing.T) {
	workdir, home := dirs(t)
	foreign := `{"mcpServers": {"files": {"command": "npx", "args": ["-y", "srv", "${DATA_DIR:-/data}"], "env": {"TOKEN": "${GH_TOKEN}"}, "x-claude": 1}}}`
	fpath := config.ForeignPath(workdir)
	writeFile(t, fpath, foreign)
	fi0, _ := os.Stat(fpath)
	st := config.NewStore(workdir, home)

	if err := st.Adopt("files"); err != nil {
		t.Fatal(err)
	}
	out := readFile(t, config.ProjectPath(workdir))
	for _, want := range []string{`"${DATA_DIR:-/data}"`, `"TOKEN": "${GH_TOKEN}"`, `"x-claude": 1`} {
		if !strings.Contains(out, want) {
			t.Errorf("adopted entry lacks %s:\n%s", want, out)
		}
	}
	if err := st.Adopt("files"); !errors.Is(err, config.ErrExists) {
		t.Errorf("second adopt: %v", err)
	}
	if err := st.Adopt("nope"); !errors.Is(err, config.ErrNotFound) {
		t.Errorf("adopt missing: %v", err)
	}
	if got := readFile(t, fpath); got != foreign {
		t.Errorf("foreign file modified:\n%s", got)
	}
	if fi, _ := os.Stat(fpath); !fi.ModTime().Equal(fi0.ModTime()) || fi.Mode() != fi0.Mode() {
		t.Errorf("foreign file touched")
	}
	cfg := load(t, workdir, home, map[string]string{"GH_TOKEN": "tok"})
	s, ok := cfg.Server("files")
	if !ok || s.Scope != config.ScopeProject || s.Args[2] != "/data" || s.Env["TOKEN"] != "tok" {
		t.Errorf("adopted server %+v (warnings %s)", s, warningsText(cfg))
	}
}

// Concurrent writers (goroutines and other processes) never lose an edit.
func TestConcurrentWritersLoseNothing(t *testing.T) {
	workdir, home := dirs(t)
	const goroutines, perWriter, procs = 8, 15, 2
	var cmds []*exec.Cmd
	for p := 0; p < procs; p++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriterProcess$")
		cmd.Env = append(os.Environ(), "KIN_CONFIG_HELPER=1", "KIN_HELPER_WORKDIR="+workdir,
			"KIN_HELPER_HOME="+home, "KIN_HELPER_PREFIX=proc"+strconv.Itoa(p), "KIN_HELPER_N="+strconv.Itoa(perWriter))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*perWriter)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- addMany(config.NewStore(workdir, home), fmt.Sprintf("g%d", g), perWriter)
		}()
	}
	wg.Wait()
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper process: %v", err)
		}
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	cfg := load(t, workdir, home, nil)
	if want := (goroutines + procs) * perWriter; len(cfg.Servers) != want {
		t.Fatalf("%d servers, want %d (warnings %s)", len(cfg.Servers), want, warningsText(cfg))
	}
	for _, s := range cfg.Servers {
		if !s.Disabled { // every writer disabled each of its servers after adding it
			t.Errorf("%s: lost SetEnabled", s.Name)
		}
	}
}

// addMany adds n servers and then disables each: two read-modify-writes per server.
func addMany(st *config.Store, prefix string, n int) error {
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s-%d", prefix, i)
		if err := st.Add(config.ScopeProject, name, json.RawMessage(`{"command":"x"}`)); err != nil {
			return err
		}
		if err := st.SetEnabled(config.ScopeProject, name, false); err != nil {
			return err
		}
	}
	return nil
}

// TestHelperWriterProcess is the body of a second writer process.
func TestHelperWriterProcess(t *testing.T) {
	if os.Getenv("KIN_CONFIG_HELPER") != "1" {
		t.Skip("helper process only")
	}
	n, _ := strconv.Atoi(os.Getenv("KIN_HELPER_N"))
	st := config.NewStore(os.Getenv("KIN_HELPER_WORKDIR"), os.Getenv("KIN_HELPER_HOME"))
	if err := addMany(st, os.Getenv("KIN_HELPER_PREFIX"), n); err != nil {
		t.Fatal(err)
	}
}

func TestWriteFollowsSymlink(t *testing.T) {
	workdir, home := dirs(t)
	real := filepath.Join(t.TempDir(), "dotfiles-mcp.json")
	writeFile(t, real, `{"mcpServers":{}}`)
	if err := os.Symlink(real, config.GlobalPath(home)); err != nil {
		t.Fatal(err)
	}
	if err := config.NewStore(workdir, home).Add(config.ScopeGlobal, "a", json.RawMessage(`{"command":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(config.GlobalPath(home)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("symlink replaced: %v", err)
	}
	if !strings.Contains(readFile(t, real), `"a"`) {
		t.Fatal("target not updated")
	}
}

// An add that would make the file larger than kin reads is refused, and
// the servers already there stay: written, the file was ignored whole at
// the next load (every server gone until someone edited it by hand).
func TestAnAddThatWouldOutgrowTheFileIsRefused(t *testing.T) {
	workdir, home := dirs(t)
	st := config.NewStore(workdir, home)
	if err := st.Add(config.ScopeProject, "keep", json.RawMessage(`{"command":"one"}`)); err != nil {
		t.Fatal(err)
	}
	arg := strings.Repeat("a", 1<<20)
	var err error
	for i := range 5 {
		raw, _ := json.Marshal(map[string]any{"command": "x", "args": []string{arg}})
		if err = st.Add(config.ScopeProject, fmt.Sprintf("big%d", i), raw); err != nil {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "over the") {
		t.Fatalf("the fifth 1 MiB add: %v", err)
	}
	cfg, lerr := config.Load(workdir, home)
	if lerr != nil {
		t.Fatal(lerr)
	}
	if _, ok := cfg.Server("keep"); !ok {
		t.Fatal("the servers already in the file were lost")
	}
}
