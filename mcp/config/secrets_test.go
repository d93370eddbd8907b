package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/mcp/config"
)

func noEnv(string) (string, bool) { return "", false }

// A project entry's secret values go to KIN_HOME, the project file gets
// references, and only that project's server resolves them.
func TestProjectSecretsStayOutOfTheProjectFile(t *testing.T) {
	home, ws, other := t.TempDir(), t.TempDir(), t.TempDir()
	st := config.NewStore(ws, home)
	var moved []string
	st.Moved = func(_ string, m []string) { moved = m }
	stdio := `{"command":"srv","env":{"GITHUB_TOKEN":"ghp_canary_1","MODE":"ro","FROM_ENV":"${HOME_TOKEN}","with-dash":"dash_canary"}}`
	web := `{"type":"http","url":"https://bob:pw_canary@api.example.com/mcp?key=k_canary&v=2","headers":{"Authorization":"Bearer b_canary","X-Api-Key":"x_canary"}}`
	if err := st.Add(config.ScopeProject, "gh", json.RawMessage(stdio)); err != nil {
		t.Fatal(err)
	}
	if strings.Join(moved, "; ") != "env.GITHUB_TOKEN as ${GITHUB_TOKEN}; env.MODE as ${MODE}; env.with-dash as ${GH_WITH_DASH}" {
		t.Errorf("moved %q", moved)
	}
	if err := st.Add(config.ScopeProject, "api", json.RawMessage(web)); err != nil {
		t.Fatal(err)
	}
	file, _ := os.ReadFile(config.ProjectPath(ws))
	if strings.Contains(string(file), "canary") {
		t.Fatalf("a secret in the project file:\n%s", file)
	}
	for _, want := range []string{`"FROM_ENV": "${HOME_TOKEN}"`, `"https://bob:${API_URL_PASSWORD}@api.example.com/mcp?key=${API_URL_KEY}&v=${API_URL_V}"`,
		`"Authorization": "Bearer ${API_AUTHORIZATION}"`, `"X-Api-Key": "${API_X_API_KEY}"`} {
		if !strings.Contains(string(file), want) {
			t.Errorf("project file lacks %s:\n%s", want, file)
		}
	}

	cfg, err := config.Load(ws, home, config.WithLookupEnv(func(k string) (string, bool) { return "from-env", k == "HOME_TOKEN" }))
	if err != nil || len(cfg.Warnings) != 0 {
		t.Fatalf("load: %v %v", err, cfg.Warnings)
	}
	gh, _ := cfg.Server("gh")
	api, _ := cfg.Server("api")
	if gh.Env["GITHUB_TOKEN"] != "ghp_canary_1" || gh.Env["MODE"] != "ro" || gh.Env["FROM_ENV"] != "from-env" || gh.Env["with-dash"] != "dash_canary" ||
		api.URL != "https://bob:pw_canary@api.example.com/mcp?key=k_canary&v=2" || api.Headers["Authorization"] != "Bearer b_canary" {
		t.Errorf("resolved %+v %+v", gh.Env, api)
	}
	if d := api.Display(); strings.Contains(d.Launch+strings.Join(d.Headers, ""), "canary") {
		t.Errorf("display %+v", d)
	}

	// The same file in another project resolves nothing of it.
	if err := os.MkdirAll(filepath.Dir(config.ProjectPath(other)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config.ProjectPath(other), file, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _ = config.Load(other, home, config.WithLookupEnv(noEnv))
	if len(cfg.Servers) != 0 || len(cfg.Warnings) != 2 || !strings.Contains(cfg.Warnings[0].Problem, "nor is a value stored for this project's server") {
		t.Errorf("another project: %+v %v", cfg.Servers, cfg.Warnings)
	}

	// Update keeps the stored values still referred to and stores new ones.
	if err := st.Update(config.ScopeProject, "gh", json.RawMessage(`{"command":"srv","env":{"GITHUB_TOKEN":"${GITHUB_TOKEN}","NEW":"n_canary"}}`)); err != nil {
		t.Fatal(err)
	}
	cfg, _ = config.Load(ws, home, config.WithLookupEnv(noEnv))
	if gh, _ := cfg.Server("gh"); gh.Env["GITHUB_TOKEN"] != "ghp_canary_1" || gh.Env["NEW"] != "n_canary" || len(gh.Env) != 2 {
		t.Errorf("after update %+v (%v)", gh.Env, cfg.Warnings)
	}
	stored, _ := os.ReadFile(config.SecretsPath(home))
	if strings.Contains(string(stored), "dash_canary") {
		t.Errorf("a value no longer referred to is still stored:\n%s", stored)
	}

	// Remove forgets them; the global scope is KIN_HOME's own file and
	// keeps what it is given.
	for _, name := range []string{"gh", "api"} {
		if err := st.Remove(config.ScopeProject, name); err != nil {
			t.Fatal(err)
		}
	}
	if stored, _ := os.ReadFile(config.SecretsPath(home)); strings.Contains(string(stored), "canary") {
		t.Errorf("secrets of removed servers:\n%s", stored)
	}
	if err := st.Add(config.ScopeGlobal, "g", json.RawMessage(`{"command":"srv","env":{"T":"global_canary"}}`)); err != nil {
		t.Fatal(err)
	}
	if g, _ := os.ReadFile(config.GlobalPath(home)); !strings.Contains(string(g), "global_canary") {
		t.Errorf("global file:\n%s", g)
	}
}

// A failed Add (the name is taken) stores nothing: the existing server's
// values are not replaced.
func TestProjectSecretsOfAFailedAdd(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	st := config.NewStore(ws, home)
	if err := st.Add(config.ScopeProject, "s", json.RawMessage(`{"command":"srv","env":{"T":"first_canary"}}`)); err != nil {
		t.Fatal(err)
	}
	if err := st.Add(config.ScopeProject, "s", json.RawMessage(`{"command":"srv","env":{"T":"second_canary"}}`)); err == nil {
		t.Fatal("second add succeeded")
	}
	cfg, _ := config.Load(ws, home, config.WithLookupEnv(noEnv))
	if s, _ := cfg.Server("s"); s.Env["T"] != "first_canary" {
		t.Errorf("env %v", s.Env)
	}
}
