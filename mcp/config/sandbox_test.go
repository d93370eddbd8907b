package config_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/trust"
)

// The "sandbox" field: "off" or {"write": [...], "network": bool}, stdio
// only, checked; part of the launch identity, but an entry without it (or
// with the default written out) keeps the identity it had.
func TestSandboxField(t *testing.T) {
	workdir, home := dirs(t)
	writeFile(t, filepath.Join(home, "mcp.json"), `{"mcpServers": {
		"plain":   {"command": "srv"},
		"default": {"command": "srv", "sandbox": {}},
		"off":     {"command": "srv", "sandbox": "off"},
		"wide":    {"command": "srv", "sandbox": {"write": ["${workspaceFolder}/out", "~/.cache/x", "/data"], "network": false}},
		"bad1":    {"command": "srv", "sandbox": "on"},
		"bad2":    {"command": "srv", "sandbox": {"write": ["relative/path"]}},
		"bad3":    {"command": "srv", "sandbox": {"write": ["${HOME}/x"]}},
		"bad4":    {"command": "srv", "sandbox": {"read": ["/"]}},
		"bad5":    {"url": "https://example.com/mcp", "sandbox": "off"}
	}}`)
	cfg := load(t, workdir, home, nil)
	if got := names(cfg.Servers); got != "plain@global,default@global,off@global,wide@global" {
		t.Fatalf("servers %s; warnings %s", got, warningsText(cfg))
	}
	w := warningsText(cfg)
	for _, want := range []string{`"bad1"`, `"bad2"`, `"bad3"`, `"bad4"`, `"bad5"`, "stdio servers only", `unknown field "read"`} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %s: %s", want, w)
		}
	}
	get := func(n string) config.Server { s, _ := cfg.Server(n); return s }
	if trust.Hash(get("plain")) != trust.Hash(get("default")) {
		t.Error("the default written out changed the launch identity")
	}
	if trust.Hash(get("plain")) == trust.Hash(get("off")) || trust.Hash(get("plain")) == trust.Hash(get("wide")) || trust.Hash(get("off")) == trust.Hash(get("wide")) {
		t.Error("a sandbox setting is not part of the launch identity")
	}
	if d := get("wide").Display().Sandbox; !strings.Contains(d, "${workspaceFolder}/out") || !strings.Contains(d, "no network") {
		t.Errorf("display %q", d)
	}
	if d := get("off").Display().Sandbox; d != `"sandbox": "off"` {
		t.Errorf("display %q", d)
	}
}
