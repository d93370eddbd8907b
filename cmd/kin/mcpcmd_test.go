package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// kinCLI runs the built binary in dir with a private KIN_HOME.
func kinCLI(t *testing.T, dir, home string, args ...string) (string, int) {
	t.Helper()
	return kinCLIWithInput(t, dir, home, "", args...)
}

// kinCLIWithInput is kinCLI with stdin (not a terminal).
func kinCLIWithInput(t *testing.T, dir, home, stdin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(kinBin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"KIN_HOME=" + home, "HOME=" + home, "PATH=" + os.Getenv("PATH"), "CANARY_TOKEN=tok-canary-123"}
	cmd.Stdin = strings.NewReader(stdin)
	out, _ := cmd.CombinedOutput()
	return string(out), cmd.ProcessState.ExitCode()
}

func TestMCPCommandRoundTrip(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		out, code := kinCLI(t, ws, home, args...)
		if code != 0 {
			t.Fatalf("kin %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
		return out
	}
	if out := run("mcp", "add", "--scope", "project", "--env", "TOKEN=secret-env-canary", "files", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/data"); !strings.Contains(out, "env.TOKEN as ${TOKEN}") || strings.Contains(out, "secret-env-canary") {
		t.Errorf("add said:\n%s", out)
	}
	run("mcp", "add", "--scope", "global", "--url", "https://example.com/mcp", "--header", "Authorization=Bearer ${CANARY_TOKEN}", "api")
	list := run("mcp", "list")
	for _, want := range []string{"files (project, stdio): npx -y @modelcontextprotocol/server-filesystem /data", "api (global, http): https://example.com/mcp", "not trusted"} {
		if !strings.Contains(list, want) {
			t.Errorf("list lacks %q:\n%s", want, list)
		}
	}
	get := run("mcp", "get", "api")
	if !strings.Contains(get, "Authorization: Bearer ●●●●") {
		t.Errorf("get:\n%s", get)
	}
	for _, out := range []string{list, get, run("mcp", "get", "files")} {
		if strings.Contains(out, "secret-env-canary") || strings.Contains(out, "tok-canary-123") {
			t.Fatalf("a secret was printed:\n%s", out)
		}
	}
	// The project file, which people commit, holds a reference; the value
	// is in KIN_HOME, and the server still gets it.
	project, _ := os.ReadFile(filepath.Join(ws, ".kin", "mcp.json"))
	stored, _ := os.ReadFile(filepath.Join(home, "mcp_secrets.json"))
	if strings.Contains(string(project), "secret-env-canary") || !strings.Contains(string(project), `"TOKEN": "${TOKEN}"`) ||
		!strings.Contains(string(stored), "secret-env-canary") {
		t.Errorf("project file:\n%s\nsecrets file:\n%s", project, stored)
	}
	for _, p := range []string{filepath.Join(ws, ".kin", "mcp.json"), filepath.Join(home, "mcp.json"), filepath.Join(home, "mcp_secrets.json")} {
		st, err := os.Stat(p)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", p, err, st.Mode())
		}
	}
	b, _ := os.ReadFile(filepath.Join(home, "mcp.json"))
	if !strings.Contains(string(b), "${CANARY_TOKEN}") {
		t.Errorf("the ${VAR} spelling was not kept:\n%s", b)
	}
	run("mcp", "disable", "files")
	if !strings.Contains(run("mcp", "list"), "disabled") {
		t.Error("disable did not show")
	}
	run("mcp", "enable", "files")
	run("mcp", "remove", "files")
	if strings.Contains(run("mcp", "list"), "files (") {
		t.Error("remove did not remove")
	}
	if stored, _ := os.ReadFile(filepath.Join(home, "mcp_secrets.json")); strings.Contains(string(stored), "secret-env-canary") {
		t.Errorf("the removed server's secret is still stored:\n%s", stored)
	}
	if out, code := kinCLI(t, ws, home, "mcp", "remove", "nope"); code == 0 || !strings.Contains(out, "nope") {
		t.Errorf("removing a missing server: %d %s", code, out)
	}
}

func TestMCPCommandAdoptsForeignFile(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	foreign := `{"mcpServers":{"legacy":{"command":"node","args":["server.js"],"env":{"K":"${LEGACY_KEY}"}}}}`
	os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(foreign), 0o644)
	out, _ := kinCLI(t, ws, home, "mcp", "list")
	if !strings.Contains(out, "foreign") || !strings.Contains(out, ".mcp.json") {
		t.Errorf("list:\n%s", out)
	}
	if out, code := kinCLI(t, ws, home, "mcp", "adopt", "legacy"); code != 0 {
		t.Fatalf("adopt: %s", out)
	}
	b, _ := os.ReadFile(filepath.Join(ws, ".kin", "mcp.json"))
	if !strings.Contains(string(b), "${LEGACY_KEY}") {
		t.Errorf("adopted entry was expanded or missing:\n%s", b)
	}
	if after, _ := os.ReadFile(filepath.Join(ws, ".mcp.json")); string(after) != foreign {
		t.Error("the foreign file was modified")
	}
	if out, _ := kinCLI(t, ws, home, "grants", "list"); !strings.Contains(out, "no standing grants") {
		t.Errorf("adoption granted trust: %s", out)
	}
}

// kin mcp get shows how an entry's "sandbox" differs from the default.
func TestMCPGetShowsSandbox(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "mcp.json"), []byte(`{"mcpServers":{
		"box":  {"command": "srv", "sandbox": {"write": ["${workspaceFolder}/out"], "network": false}},
		"open": {"command": "srv", "sandbox": "off"},
		"plain": {"command": "srv"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"box": "sandbox:   also writes ${workspaceFolder}/out; no network\n", "open": "sandbox:   \"sandbox\": \"off\"\n", "plain": ""} {
		out, code := kinCLI(t, ws, home, "mcp", "get", name)
		if code != 0 || (want != "" && !strings.Contains(out, want)) || (want == "" && strings.Contains(out, "sandbox:")) {
			t.Errorf("%s (exit %d):\n%s", name, code, out)
		}
	}
}

// Flags after the server's name are flags (as other MCP clients take
// them), not the server's command: read as the command and its arguments,
// "files --env TOKEN=... -- npx srv" made a server running "--env" whose
// first argument, the secret, went into .kin/mcp.json in clear, and
// "remove files --scope global" removed the project's entry instead. A flag
// for the other transport is refused, not dropped.
func TestMCPCommandTakesFlagsAfterTheName(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	run := func(want int, args ...string) string {
		t.Helper()
		out, code := kinCLI(t, ws, home, args...)
		if code != want {
			t.Fatalf("kin %q: exit %d, want %d\n%s", args, code, want, out)
		}
		return out
	}
	run(0, "mcp", "add", "files", "--env", "TOKEN=sk-env-canary", "--", "npx", "-y", "srv")
	run(0, "mcp", "add", "api", "--url", "https://example.com/mcp?key=sk-query-canary", "--header", "Authorization=Bearer sk-header-canary")
	project, _ := os.ReadFile(filepath.Join(ws, ".kin", "mcp.json"))
	for _, secret := range []string{"sk-env-canary", "sk-query-canary", "sk-header-canary"} {
		if strings.Contains(string(project), secret) {
			t.Errorf("%s went into the project file:\n%s", secret, project)
		}
	}
	if list := run(0, "mcp", "list"); !strings.Contains(list, "files (project, stdio): npx -y srv") || !strings.Contains(list, "api (project, http): https://example.com/mcp") {
		t.Errorf("list:\n%s", list)
	}
	if get := run(0, "mcp", "get", "files"); !strings.Contains(get, "env:       TOKEN=${TOKEN}") {
		t.Errorf("get:\n%s", get)
	}

	run(0, "mcp", "add", "files", "--scope", "global", "--", "node", "global.js")
	run(0, "mcp", "remove", "files", "--scope", "global")
	if get := run(0, "mcp", "get", "files"); !strings.Contains(get, "scope:     project") {
		t.Errorf("the project's entry went:\n%s", get)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "mcp.json")); strings.Contains(string(b), "global.js") {
		t.Errorf("the global entry stayed:\n%s", b)
	}

	before, _ := os.ReadFile(filepath.Join(ws, ".kin", "mcp.json"))
	run(2, "mcp", "add", "x", "--url", "https://example.com/mcp", "--env", "K=sk-dropped")
	run(2, "mcp", "add", "y", "--header", "A=b", "--", "node")
	run(2, "mcp", "remove", "files", "api")
	if after, _ := os.ReadFile(filepath.Join(ws, ".kin", "mcp.json")); string(after) != string(before) {
		t.Errorf("a refused command wrote:\n%s", after)
	}
	// after "--", a command may look like a flag
	run(0, "mcp", "add", "h", "--", "--help")
	if get := run(0, "mcp", "get", "h"); !strings.Contains(get, "launch:    --help") {
		t.Errorf("get h:\n%s", get)
	}
}

// kin mcp get shows the program a bare command runs when PATH finds it in
// the project, as the launch approval does: "launch: eslint-mcp" alone
// reads as a program of the system, and it is the repository's file.
func TestMCPGetShowsAProgramOfTheProject(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	bin := filepath.Join(ws, "node_modules", ".bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "eslint-mcp"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".kin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".kin", "mcp.json"), []byte(`{"mcpServers":{"lint":{"command":"eslint-mcp"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// a relative PATH entry, as JavaScript developers often have
	cmd := exec.Command(kinBin, "mcp", "get", "lint")
	cmd.Dir = ws
	cmd.Env = []string{"KIN_HOME=" + home, "HOME=" + home, "PATH=node_modules/.bin:" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	real, _ := filepath.EvalSymlinks(filepath.Join(bin, "eslint-mcp"))
	if err != nil || !strings.Contains(string(out), "program:   "+real) {
		t.Errorf("%v:\n%s", err, out)
	}
	if out, _ := kinCLI(t, ws, home, "mcp", "get", "lint"); strings.Contains(out, "program:") {
		t.Errorf("without the relative PATH entry, nothing of the project runs:\n%s", out)
	}
}

// An argument that is not UTF-8 is refused, not stored as U+FFFD: JSON
// cannot hold it, and the server would run another path than the one
// typed (or get an altered secret). The value of a pair is not echoed.
func TestMCPAddRefusesArgumentsThatAreNotUTF8(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	for _, args := range [][]string{
		{"mcp", "add", "x", "--", "node", "/data/\xff\xfe.js"},
		{"mcp", "add", "y", "--env", "K=sk-canary\xff", "--", "node"},
	} {
		out, code := kinCLI(t, ws, home, args...)
		if code != 2 || !strings.Contains(out, "not valid UTF-8") || strings.Contains(out, "sk-canary") {
			t.Errorf("%q: exit %d\n%s", args, code, out)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, ".kin", "mcp.json")); !os.IsNotExist(err) {
		t.Errorf("something was written: %v", err)
	}
}

// A repository may commit .kin/mcp.json.lock as a symlink to a file
// outside it: kin mcp add (as every project write: mcp/add, enable,
// adopt) took its lock by opening that name with O_CREATE, creating a file
// wherever the link pointed. The lock is opened beneath its folder now:
// the write is refused and nothing outside is created.
func TestMCPAddDoesNotFollowALockSymlinkOutOfTheProject(t *testing.T) {
	home, ws, outside := t.TempDir(), t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "created-by-kin")
	if err := os.MkdirAll(filepath.Join(ws, ".kin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(ws, ".kin", "mcp.json.lock")); err != nil {
		t.Fatal(err)
	}
	out, code := kinCLI(t, ws, home, "mcp", "add", "x", "--", "node", "srv.js")
	if _, err := os.Lstat(target); err == nil {
		t.Fatalf("kin created %s through the repository's symlink (exit %d)\n%s", target, code, out)
	}
	if code != 1 || !strings.Contains(out, "mcp.json.lock") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}
