package confine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/sandbox/scopetest"
	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/confine"
	"github.com/kin-dev/kin/mcp/mcptest"
	"github.com/kin-dev/kin/mcp/trust"
)

// A confined server reaches the network by default; with "network": false
// it cannot connect even to a loopback listener of the host, and the
// status kin gives names the sandbox and the setting to widen.
func TestNoNetworkServerCannotConnectOut(t *testing.T) {
	w := newWorld(t)
	addr, lines := scopetest.Lines(t, "tcp", "127.0.0.1:0")
	srv := mcptest.Stdio(t, "dial-or-die", map[string]string{"KIN_MCPTEST_PROBE": addr})
	srv.Name = "netprobe"

	// the default: it connects (so the refusal below is the setting's)
	if _, plan, err := w.dial(t, srv); err != nil {
		t.Fatalf("with network: %v (plan %s)", err, plan.Describe)
	} else if !strings.Contains(plan.Describe, "reaches the network") {
		t.Errorf("plan %s", plan.Describe)
	}
	select {
	case got := <-lines:
		if got != "dial-or-die" {
			t.Errorf("the listener read %q", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a server with network never reached the listener")
	}

	off := false
	srv.Sandbox = &config.Sandbox{Network: &off}
	_, plan, err := w.dial(t, srv)
	if !strings.Contains(plan.Describe, "has no network") {
		t.Errorf("the approval does not say it has no network: %s", plan.Describe)
	}
	if err == nil {
		t.Fatal(`a server with "network": false connected out`)
	}
	for _, want := range []string{"kin's sandbox", "refused", `the "sandbox" field of MCP server netprobe`, `"network": true`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "fatal:") {
		t.Errorf("the server's stderr reached the status: %v", err)
	}
	select {
	case got := <-lines:
		t.Errorf(`a server with "network": false reached the listener: %q`, got)
	default:
	}
}

// The person's credentials (~/.ssh) are hidden from a confined server,
// while the rest of their home stays readable.
func TestServerCannotReadSSHKeys(t *testing.T) {
	w := newWorld(t)
	home := filepath.Join(filepath.Dir(w.home), "person")
	must(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	must(t, os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte("SSH-PRIVATE-KEY-CANARY"), 0o600))
	must(t, os.WriteFile(filepath.Join(home, "notes.txt"), []byte("plain notes"), 0o600))
	t.Setenv("HOME", home)
	srv := mcptest.Stdio(t, "files", nil)
	srv.Name = "probe"
	c, _, err := w.dial(t, srv)
	if err != nil {
		t.Fatal(err)
	}
	if got := call(t, c, "read", map[string]any{"path": filepath.Join(home, "notes.txt")}); got != "read: plain notes" {
		t.Errorf("the home outside its credentials is not readable: %s", got)
	}
	got := call(t, c, "read", map[string]any{"path": filepath.Join(home, ".ssh", "id_rsa")})
	if !strings.HasPrefix(got, "error:") || strings.Contains(got, "CANARY") {
		t.Errorf("~/.ssh/id_rsa read by a confined server: %s", got)
	}
}

// The entry's "sandbox" field is part of the launch: a trusted server
// whose field changes (no network, a folder to write, off) is a launch not
// trusted, said to have changed; writing the default out keeps the trust.
func TestSandboxFieldChangesTheTrustedLaunch(t *testing.T) {
	w := newWorld(t)
	entry := func(sandbox any) config.Server {
		t.Helper()
		e := map[string]any{"command": "srv-binary", "args": []string{"--stdio"}}
		if sandbox != nil {
			e["sandbox"] = sandbox
		}
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"tools": e}})
		must(t, os.WriteFile(config.GlobalPath(w.home), b, 0o600))
		cfg, err := config.Load("", w.home)
		if err != nil || len(cfg.Warnings) != 0 {
			t.Fatalf("load: %v %v", err, cfg.Warnings)
		}
		s, ok := cfg.Server("tools")
		if !ok {
			t.Fatal("no server")
		}
		return s
	}
	launch := func(s config.Server) trust.Launch { return trust.LaunchOf(s, w.work, w.home, nil) }
	store := trust.Open(w.home)
	base := launch(entry(nil))
	must(t, store.Trust(base, nil))
	if !store.IsTrusted(base) {
		t.Fatal("the trusted launch is not trusted")
	}
	for _, same := range []any{map[string]any{}, map[string]any{"network": true}, map[string]any{"write": []string{}}} {
		if l := launch(entry(same)); !store.IsTrusted(l) || l.Key() != base.Key() {
			t.Errorf("sandbox %v, the default written out, lost the trust", same)
		}
	}
	for _, changed := range []any{map[string]any{"network": false}, map[string]any{"write": []string{"${workspaceFolder}/out"}}, "off"} {
		l := launch(entry(changed))
		if l.Key() == base.Key() || l.Hash == base.Hash {
			t.Errorf("sandbox %v: the same launch identity", changed)
		}
		if store.IsTrusted(l) {
			t.Errorf("sandbox %v: still trusted", changed)
		}
		if why := store.Changed(l); !strings.Contains(why, "sandbox") {
			t.Errorf("sandbox %v: the approval says %q", changed, why)
		}
	}
	// the plan follows the field too
	if p := confine.For(confine.Env{Sandbox: w.sb, KinHome: w.home, Workspace: w.work}, entry("off"), w.work, ""); !p.Unconfined {
		t.Errorf(`"off" planned confined: %+v`, p)
	}
}
