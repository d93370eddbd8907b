package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/mcp/config"
)

// dirs returns a fresh workdir and KIN_HOME.
func dirs(t *testing.T) (workdir, home string) {
	t.Helper()
	root := t.TempDir()
	workdir, home = filepath.Join(root, "work"), filepath.Join(root, "home")
	for _, d := range []string{workdir, home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return workdir, home
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// envOf is a lookup over a fixed map.
func envOf(m map[string]string) config.LookupEnv {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func load(t *testing.T, workdir, home string, env map[string]string) *config.Config {
	t.Helper()
	cfg, err := config.Load(workdir, home, config.WithLookupEnv(envOf(env)))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return cfg
}

func names(ss []config.Server) string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name+"@"+string(s.Scope))
	}
	return strings.Join(out, ",")
}

func warningsText(cfg *config.Config) string {
	var out []string
	for _, w := range cfg.Warnings {
		out = append(out, w.String())
	}
	return strings.Join(out, "\n")
}
