package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/mcptest"
	"github.com/kin-dev/kin/mcp/trust"
)

// kin mcp show starts a trusted stdio server to read its instructions. It
// must start it as kin serve does, in the command sandbox: the person
// trusted a launch that the approval described as confined. Started
// unconfined, reading the instructions let the server write anywhere the
// person can (here a file outside the workspace and its state folder).
func TestMCPShowStartsTheServerConfined(t *testing.T) {
	if !sandbox.New(sandbox.Config{Mode: sandbox.ModeAuto}).Status().Confined {
		t.Skip("no sandbox here")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Outside the system's temp folder, which a confined server sees as
	// its own empty one: a write there would not show here.
	outside, err := os.MkdirTemp(".", "show-outside-")
	if err != nil {
		t.Fatal(err)
	}
	outside, _ = filepath.Abs(outside)
	t.Cleanup(func() { os.RemoveAll(outside) })
	probe := filepath.Join(outside, "written-by-the-server")
	home, ws := t.TempDir(), t.TempDir()
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"w": map[string]any{
		"command": exe, "env": map[string]string{mcptest.EnvServer: "write-or-die", "KIN_MCPTEST_PROBE": probe}}}})
	if err := os.WriteFile(filepath.Join(home, "mcp.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(ws, home)
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := cfg.Server("w")
	if err := trust.Open(home).Trust(trust.LaunchOf(sc, ws, home, os.LookupEnv), nil); err != nil {
		t.Fatal(err)
	}
	out, code := kinCLI(t, ws, home, "mcp", "show", "w")
	if _, err := os.Stat(probe); err == nil {
		t.Fatalf("kin mcp show ran the server unconfined: it wrote %s (exit %d)\n%s", probe, code, out)
	}
	if code != 0 || !strings.Contains(out, "instructions: (not read: unavailable") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}
