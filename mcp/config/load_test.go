package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kin-dev/kin/mcp/config"
)

func TestScopePrecedence(t *testing.T) {
	tests := []struct {
		name         string
		project      string // "" = no file
		global       string
		wantServers  string
		wantShadowed string
		wantWarn     string // substring; "" = no warnings
	}{
		{
			name:        "global only",
			global:      `{"mcpServers":{"a":{"command":"ga"},"b":{"command":"gb"}}}`,
			wantServers: "a@global,b@global",
		},
		{
			name:         "project wins a clash and comes first",
			project:      `{"mcpServers":{"a":{"command":"pa"}}}`,
			global:       `{"mcpServers":{"b":{"command":"gb"},"a":{"command":"ga"}}}`,
			wantServers:  "a@project,b@global",
			wantShadowed: "a@global",
		},
		{
			name:         "a disabled project entry still shadows the global one",
			project:      `{"mcpServers":{"a":{"command":"pa","disabled":true}}}`,
			global:       `{"mcpServers":{"a":{"command":"ga"}}}`,
			wantServers:  "a@project",
			wantShadowed: "a@global",
		},
		{
			name:         "a malformed project entry still shadows (and is warned)",
			project:      `{"mcpServers":{"a":{"command":5}}}`,
			global:       `{"mcpServers":{"a":{"command":"ga"}}}`,
			wantServers:  "",
			wantShadowed: "a@global",
			wantWarn:     `server "a" skipped: "command" must be a string`,
		},
		{
			name:        "a shadowed global entry is not expanded (no missing-variable warning)",
			project:     `{"mcpServers":{"a":{"command":"pa"}}}`,
			global:      `{"mcpServers":{"a":{"command":"${NOT_SET}"}}}`,
			wantServers: "a@project", wantShadowed: "a@global",
		},
		{
			name:        "a project file that is not JSON loads nothing; global still loads",
			project:     `{"mcpServers":{"a":{"command":"pa"}`,
			global:      `{"mcpServers":{"a":{"command":"ga"}}}`,
			wantServers: "a@global",
			wantWarn:    "none of its servers are loaded",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			workdir, home := dirs(t)
			if tt.project != "" {
				writeFile(t, config.ProjectPath(workdir), tt.project)
			}
			if tt.global != "" {
				writeFile(t, config.GlobalPath(home), tt.global)
			}
			cfg := load(t, workdir, home, nil)
			if got := names(cfg.Servers); got != tt.wantServers {
				t.Errorf("servers = %q, want %q", got, tt.wantServers)
			}
			if got := names(cfg.Shadowed); got != tt.wantShadowed {
				t.Errorf("shadowed = %q, want %q", got, tt.wantShadowed)
			}
			w := warningsText(cfg)
			if tt.wantWarn == "" && w != "" {
				t.Errorf("unexpected warnings:\n%s", w)
			}
			if !strings.Contains(w, tt.wantWarn) {
				t.Errorf("warnings %q lack %q", w, tt.wantWarn)
			}
			for _, s := range cfg.Servers {
				if s.Scope == config.ScopeProject && s.Command != "pa" && !s.Disabled {
					t.Errorf("project server %s has command %q", s.Name, s.Command)
				}
			}
		})
	}
}

func TestLoadMissingFilesAndEmptyDirs(t *testing.T) {
	workdir, home := dirs(t)
	for _, c := range [][2]string{{workdir, home}, {"", home}, {workdir, ""}, {"", ""}} {
		cfg, err := config.Load(c[0], c[1])
		if err != nil || len(cfg.Servers)+len(cfg.Warnings)+len(cfg.Notices)+len(cfg.Foreign) != 0 {
			t.Errorf("Load(%q,%q) = %+v, %v; want empty", c[0], c[1], cfg, err)
		}
	}
}

func TestLoadIOErrorIsAnError(t *testing.T) {
	workdir, home := dirs(t)
	if err := os.MkdirAll(config.GlobalPath(home), 0o700); err != nil { // a directory, not a file
		t.Fatal(err)
	}
	if _, err := config.Load(workdir, home); err == nil {
		t.Fatal("Load succeeded although mcp.json is a directory")
	}
}

func TestWorkdirKinIsKinHome(t *testing.T) {
	workdir, _ := dirs(t)
	home := filepath.Join(workdir, ".kin")
	writeFile(t, config.GlobalPath(home), `{"mcpServers":{"a":{"command":"x"}}}`)
	cfg := load(t, workdir, home, nil)
	if got := names(cfg.Servers); got != "a@global" || len(cfg.Shadowed) != 0 {
		t.Fatalf("servers %q shadowed %q; want the shared file loaded once as global", got, names(cfg.Shadowed))
	}
}

func TestDisabledIsListedButNotExpanded(t *testing.T) {
	workdir, home := dirs(t)
	writeFile(t, config.GlobalPath(home), `{"mcpServers":{
		"off":{"command":"run","args":["${MISSING}"],"disabled":true},
		"on":{"command":"run","args":["${SET}"]}}}`)
	var looked []string
	lookup := func(k string) (string, bool) { looked = append(looked, k); return "v", k == "SET" }
	cfg, err := config.Load(workdir, home, config.WithLookupEnv(lookup))
	if err != nil {
		t.Fatal(err)
	}
	if w := warningsText(cfg); w != "" {
		t.Fatalf("warnings: %s", w)
	}
	off, _ := cfg.Server("off")
	on, _ := cfg.Server("on")
	if !off.Disabled || off.Command != "" || off.Args != nil || off.Connectable() {
		t.Errorf("disabled server resolved or connectable: %+v", off)
	}
	if on.Disabled || on.Args[0] != "v" || !on.Connectable() {
		t.Errorf("enabled server: %+v", on)
	}
	if strings.Join(looked, ",") != "SET" {
		t.Errorf("looked up %v; want only SET", looked)
	}
	if got := names(cfg.Connectable()); got != "on@global" {
		t.Errorf("Connectable = %q", got)
	}
}

func TestDuplicateNameWarnsLastWins(t *testing.T) {
	workdir, home := dirs(t)
	writeFile(t, config.GlobalPath(home), `{"mcpServers":{"a":{"command":"first"},"a":{"command":"second"}}}`)
	cfg := load(t, workdir, home, nil)
	if s, ok := cfg.Server("a"); !ok || s.Command != "second" || len(cfg.Servers) != 1 {
		t.Fatalf("servers = %+v", cfg.Servers)
	}
	if !strings.Contains(warningsText(cfg), "more than once") {
		t.Fatalf("no duplicate warning: %s", warningsText(cfg))
	}
}

func TestForeignMCPJSONIsListedNotLoaded(t *testing.T) {
	workdir, home := dirs(t)
	foreign := `{"mcpServers":{"evil":{"command":"sh","args":["-c","${PAYLOAD}"]},"bad":{"url":5}}}`
	writeFile(t, config.ForeignPath(workdir), foreign)
	var looked []string
	lookup := func(k string) (string, bool) { looked = append(looked, k); return "x", true }
	cfg, err := config.Load(workdir, home, config.WithLookupEnv(lookup))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != 0 {
		t.Fatalf(".mcp.json servers were loaded: %s", names(cfg.Servers))
	}
	if got := names(cfg.Foreign); got != "evil@foreign" {
		t.Fatalf("foreign = %q", got)
	}
	f := cfg.Foreign[0]
	if f.Command != "" || f.Args != nil || f.Connectable() {
		t.Errorf("foreign entry expanded or connectable: %+v", f)
	}
	if len(looked) != 0 {
		t.Errorf("foreign entry triggered env lookups %v", looked)
	}
	if len(cfg.Notices) != 1 || !strings.Contains(cfg.Notices[0], "not loaded") || !strings.Contains(cfg.Notices[0], ".kin/mcp.json") {
		t.Errorf("notices = %q", cfg.Notices)
	}
	if !strings.Contains(warningsText(cfg), `server "bad" skipped`) {
		t.Errorf("no warning for the malformed foreign entry: %s", warningsText(cfg))
	}
	if d := f.Display(); d.Launch != "sh -c ${PAYLOAD}" {
		t.Errorf("foreign display = %q", d.Launch)
	}
	if got := readFile(t, config.ForeignPath(workdir)); got != foreign {
		t.Errorf("foreign file changed")
	}
}

func TestMalformedForeignFileStillNoted(t *testing.T) {
	workdir, home := dirs(t)
	writeFile(t, config.ForeignPath(workdir), `{"mcpServers":`)
	cfg := load(t, workdir, home, nil)
	if len(cfg.Notices) != 1 || len(cfg.Foreign) != 0 || len(cfg.Warnings) != 1 ||
		!strings.Contains(cfg.Warnings[0].Problem, "cannot be listed or adopted") {
		t.Fatalf("notices %q foreign %d warnings %q", cfg.Notices, len(cfg.Foreign), warningsText(cfg))
	}
}

// A repository's .kin/mcp.json or .mcp.json that is a FIFO (or a folder) is
// a warning: never waited on, and your own servers still load.
func TestARepositorysUnreadableFileIsAWarning(t *testing.T) {
	for _, path := range []func(string) string{config.ProjectPath, config.ForeignPath} {
		workdir, home := dirs(t)
		writeFile(t, config.GlobalPath(home), `{"mcpServers":{"mine":{"command":"x"}}}`)
		if err := os.MkdirAll(filepath.Dir(path(workdir)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(path(workdir), 0o644); err != nil {
			t.Skip("no FIFOs here:", err)
		}
		done := make(chan *config.Config, 1)
		go func() { done <- load(t, workdir, home, nil) }()
		select {
		case cfg := <-done:
			if names(cfg.Servers) != "mine@global" || !strings.Contains(warningsText(cfg), "cannot be read") {
				t.Errorf("%s: servers %q, warnings %q", path(workdir), names(cfg.Servers), warningsText(cfg))
			}
		case <-time.After(time.Minute): // "forever", on a loaded machine too
			t.Fatalf("loading waits on the FIFO %s", path(workdir))
		}
	}
}
