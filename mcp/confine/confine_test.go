package confine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/confine"
	"github.com/kin-dev/kin/mcp/connect"
	"github.com/kin-dev/kin/mcp/mcptest"
)

func TestMain(m *testing.M) { mcptest.Main(m) }

// world is a kin home, a workspace and a folder outside both, below the
// package folder: not in the system's temp folder, which the sandbox
// replaces anyway, so that what is hidden is hidden by the policy.
type world struct {
	sb                  *sandbox.Sandbox
	home, work, outside string
}

func newWorld(t testing.TB) world {
	t.Helper()
	sb := sandbox.New(sandbox.Config{Mode: sandbox.ModeAuto})
	if !sb.Status().Confined {
		t.Skip("no sandbox here: " + sb.Status().Reason)
	}
	base, err := os.MkdirTemp(outsideTmp(t), "confine-test-")
	if err != nil {
		t.Fatal(err)
	}
	base, _ = filepath.Abs(base)
	t.Cleanup(func() { os.RemoveAll(base) })
	w := world{sb: sandbox.New(sandbox.Config{Mode: sandbox.ModeAuto, Hidden: []string{filepath.Join(base, "home")}}),
		home: filepath.Join(base, "home"), work: filepath.Join(base, "work"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{w.home, w.work, w.outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.WriteFile(filepath.Join(w.home, "mcp.json"), []byte("kin-home-secret"), 0o600))
	must(t, os.WriteFile(filepath.Join(w.work, "readme.txt"), []byte("hello"), 0o600))
	return w
}

// outsideTmp is where a test world goes: not under the system's temporary
// folder, which a confined server sees as a private empty /tmp (a world
// there would be neither visible nor read-only, but missing). The package
// folder, unless the repository itself is under /tmp (a CI clone can be):
// then the user's cache folder.
func outsideTmp(t testing.TB) string {
	t.Helper()
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	tmp, _ := filepath.EvalSymlinks(os.TempDir())
	if real, _ := filepath.EvalSymlinks(here); !strings.HasPrefix(real+"/", tmp+"/") && !strings.HasPrefix(here+"/", os.TempDir()+"/") {
		return here
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skip("the repository is under the temporary folder and there is no cache folder for the test world: " + err.Error())
	}
	dir := filepath.Join(cache, "kin-confine-test")
	must(t, os.MkdirAll(dir, 0o700))
	return dir
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (w world) dial(t testing.TB, srv config.Server) (*connect.Conn, confine.Plan, error) {
	t.Helper()
	plan := confine.For(confine.Env{Sandbox: w.sb, KinHome: w.home, Workspace: w.work}, srv, w.work, srv.Command)
	must(t, plan.Prepare())
	c, err := connect.Dial(context.Background(), srv, connect.Options{Workdir: w.work, Confine: plan.Confine})
	if err == nil {
		t.Cleanup(c.Close)
	}
	return c, plan, err
}

func call(t *testing.T, c *connect.Conn, name string, args map[string]any) string {
	t.Helper()
	res, err := c.Session.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// By default a stdio server reads the workspace, writes only its state
// folder, never sees kin's home, and cannot write anywhere else.
func TestServerIsConfinedByDefault(t *testing.T) {
	w := newWorld(t)
	srv := mcptest.Stdio(t, "files", nil)
	srv.Name = "probe"
	c, plan, err := w.dial(t, srv)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Unconfined || !strings.Contains(plan.Describe, "Sandboxed") || !strings.Contains(plan.Describe, confine.StateDir(w.home, "probe")) {
		t.Fatalf("plan %+v", plan)
	}
	if got := call(t, c, "read", map[string]any{"path": filepath.Join(w.work, "readme.txt")}); got != "read: hello" {
		t.Errorf("workspace not readable: %s", got)
	}
	if got := call(t, c, "read", map[string]any{"path": filepath.Join(w.home, "mcp.json")}); !strings.HasPrefix(got, "error:") {
		t.Errorf("kin's home readable: %s", got)
	}
	for _, p := range []string{filepath.Join(w.outside, "x"), filepath.Join(w.work, "planted"), filepath.Join(w.home, "mcp.json")} {
		if got := call(t, c, "write", map[string]any{"path": p, "text": "pwned"}); !strings.HasPrefix(got, "error:") {
			t.Errorf("wrote %s: %s", p, got)
		}
		if b, err := os.ReadFile(p); err == nil && string(b) == "pwned" {
			t.Errorf("%s changed on the host", p)
		}
	}
	state := filepath.Join(confine.StateDir(w.home, "probe"), "kept")
	if got := call(t, c, "write", map[string]any{"path": state, "text": "ok"}); !strings.HasPrefix(got, "wrote") {
		t.Errorf("state folder not writable: %s", got)
	}
	if b, _ := os.ReadFile(state); string(b) != "ok" {
		t.Errorf("state not kept on the host: %q", b)
	}
	env := call(t, c, "env", nil)
	if !strings.Contains(env, "npm_config_cache="+confine.StateDir(w.home, "probe")) {
		t.Errorf("npm cache not in the state folder: %s", env)
	}
}

// "write" widens the writable folders; "off" runs the server unconfined,
// said on the approval; both are part of the launch identity.
func TestSandboxSettingWidensAndIsIdentity(t *testing.T) {
	w := newWorld(t)
	srv := mcptest.Stdio(t, "files", nil)
	srv.Name = "probe"
	srv.Sandbox = &config.Sandbox{Write: []string{config.WorkspaceFolder + "/out"}}
	must(t, os.MkdirAll(filepath.Join(w.work, "out"), 0o700))
	c, plan, err := w.dial(t, srv)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan.Describe, filepath.Join(w.work, "out")) {
		t.Errorf("approval does not name the folder: %s", plan.Describe)
	}
	if got := call(t, c, "write", map[string]any{"path": filepath.Join(w.work, "out", "f"), "text": "ok"}); !strings.HasPrefix(got, "wrote") {
		t.Errorf("widened folder not writable: %s", got)
	}
	if got := call(t, c, "write", map[string]any{"path": filepath.Join(w.work, "g"), "text": "no"}); !strings.HasPrefix(got, "error:") {
		t.Errorf("the rest of the workspace writable: %s", got)
	}
	off := srv
	off.Sandbox = &config.Sandbox{Off: true}
	if p := confine.For(confine.Env{Sandbox: w.sb, KinHome: w.home}, off, w.work, ""); !p.Unconfined || p.Confine != nil || !strings.Contains(p.Describe, `"sandbox": "off"`) {
		t.Errorf("off: %+v", p)
	}
	def := srv
	def.Sandbox = nil
	keys := map[string]bool{def.Sandbox.Key(): true, srv.Sandbox.Key(): true, off.Sandbox.Key(): true}
	if len(keys) != 3 || def.Sandbox.Key() != "" {
		t.Errorf("keys %v", keys)
	}
}

// A server that fails because the sandbox refused it a path says so in its
// status, naming the setting.
func TestSandboxRefusalIsNamed(t *testing.T) {
	w := newWorld(t)
	srv := mcptest.Stdio(t, "write-or-die", map[string]string{"KIN_MCPTEST_PROBE": filepath.Join(w.outside, "x")})
	srv.Name = "dies"
	_, _, err := w.dial(t, srv)
	if err == nil || !strings.Contains(err.Error(), `the "sandbox" field of MCP server dies`) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(err.Error(), "fatal:") {
		t.Errorf("the server's stderr reached the status: %v", err)
	}
}

// The added start cost of a confined server: start, handshake, stop.
func BenchmarkStart(b *testing.B) {
	w := newWorld(b)
	srv := mcptest.Stdio(b, "echo", nil)
	for _, confined := range []bool{false, true} {
		name := "unconfined"
		if confined {
			name = "confined"
		}
		b.Run(name, func(b *testing.B) {
			var conf *connect.Confinement
			if confined {
				plan := confine.For(confine.Env{Sandbox: w.sb, KinHome: w.home, Workspace: w.work}, srv, w.work, srv.Command)
				must(b, plan.Prepare())
				conf = plan.Confine
			}
			for b.Loop() {
				c, err := connect.Dial(context.Background(), srv, connect.Options{Workdir: w.work, Confine: conf})
				if err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
		})
	}
}

// Attack: a repository's server is named like one of the person's global
// servers ("files"). Their state folders were one ($KIN_HOME/mcp-state/
// files, with the npm cache where npx installs packages), so the
// repository's confined server could plant code that the global server
// (trusted, perhaps unconfined) ran the next time it started. A project's
// server has a state folder of its own, per project, and cannot write the
// global one's.
func TestAProjectServerNamedLikeAGlobalOneHasItsOwnState(t *testing.T) {
	w := newWorld(t)
	global := mcptest.Stdio(t, "files", nil)
	project := global
	project.Scope = config.ScopeProject
	gState := confine.StateFolder(w.home, w.work, global)
	pState := confine.StateFolder(w.home, w.work, project)
	other := confine.StateFolder(w.home, w.outside, project)
	if gState != confine.StateDir(w.home, "files") || pState == gState || other == pState || !strings.HasPrefix(pState, filepath.Join(w.home, "mcp-state")+"/") {
		t.Fatalf("state folders: global %s, project %s, another project's %s", gState, pState, other)
	}
	c, plan, err := w.dial(t, project)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan.Describe, pState) {
		t.Errorf("plan %s", plan.Describe)
	}
	must(t, os.MkdirAll(gState, 0o700))
	planted := filepath.Join(gState, "npm", "_npx", "planted.js")
	if got := call(t, c, "write", map[string]any{"path": planted, "text": "steal()"}); !strings.HasPrefix(got, "error:") {
		t.Errorf("the project's server wrote the global server's state: %s", got)
	}
	if got := call(t, c, "write", map[string]any{"path": filepath.Join(pState, "kept"), "text": "ok"}); !strings.HasPrefix(got, "wrote") {
		t.Errorf("its own state folder: %s", got)
	}
	if env := call(t, c, "env", nil); !strings.Contains(env, "npm_config_cache="+filepath.Join(pState, "npm")) {
		t.Errorf("npm cache not in its own state folder: %s", env)
	}
}
