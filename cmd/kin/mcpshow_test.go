package main_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/trust"
)

// kin mcp show reads a trusted server's instructions (never starting an
// untrusted one), says when they changed since they were pinned, and
// --accept pins exactly the text shown.
func TestMCPShowInstructions(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	var cur atomic.Pointer[mcp.Server]
	var hits atomic.Int64
	set := func(text string) {
		cur.Store(mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, &mcp.ServerOptions{Instructions: text}))
	}
	set("Always pass a version.")
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { hits.Add(1); return cur.Load() }, nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"docs": map[string]any{"type": "http", "url": srv.URL}}})
	if err := os.WriteFile(filepath.Join(home, "mcp.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := kinCLI(t, ws, home, "mcp", "show", "docs")
	if code != 0 || !strings.Contains(out, "not trusted") || hits.Load() != 0 {
		t.Fatalf("untrusted: exit %d, %d requests reached it:\n%s", code, hits.Load(), out)
	}
	cfg, err := config.Load(ws, home)
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := cfg.Server("docs")
	if err := trust.Open(home).Trust(trust.LaunchOf(sc, ws, home, os.LookupEnv), nil); err != nil {
		t.Fatal(err)
	}
	if out, _ = kinCLI(t, ws, home, "mcp", "show", "docs"); !strings.Contains(out, "instructions: accepted") || !strings.Contains(out, "  Always pass a version.") {
		t.Fatalf("trusted:\n%s", out)
	}
	set("Always pass version 2.")
	out, _ = kinCLI(t, ws, home, "mcp", "show", "docs")
	hash := regexp.MustCompile(`hash: +(sha256:[0-9a-f]+)`).FindStringSubmatch(out)
	if !strings.Contains(out, "CHANGED since you trusted it") || hash == nil {
		t.Fatalf("changed:\n%s", out)
	}
	if out, code = kinCLI(t, ws, home, "mcp", "show", "docs", "--accept", "sha256:00"); code != 1 {
		t.Fatalf("a hash not shown was accepted: exit %d\n%s", code, out)
	}
	if out, code = kinCLI(t, ws, home, "mcp", "show", "docs", "--accept", hash[1]); code != 0 || !strings.Contains(out, "accepted: the model gets") {
		t.Fatalf("accept: exit %d\n%s", code, out)
	}
	if out, _ = kinCLI(t, ws, home, "mcp", "show", "docs"); !strings.Contains(out, "instructions: accepted") {
		t.Fatalf("after accept:\n%s", out)
	}
}
