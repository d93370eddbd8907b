package config_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/kin-dev/kin/mcp/config"
)

func TestExpansion(t *testing.T) {
	env := map[string]string{"A": "alpha", "B": "beta", "EMPTY": ""}
	tests := []struct {
		name string
		arg  string
		want string // expanded value, if no warning
		warn string // substring of the warning; the server is skipped
	}{
		{"plain", "${A}", "alpha", ""},
		{"embedded", "pre-${A}-post", "pre-alpha-post", ""},
		{"two refs", "${A}${B}", "alphabeta", ""},
		{"default unused", "${A:-def}", "alpha", ""},
		{"default when unset", "${NOPE:-def}", "def", ""},
		{"default when empty", "${EMPTY:-def}", "def", ""},
		{"empty default", "x${NOPE:-}y", "xy", ""},
		{"default taken literally", "${NOPE:-a:-b}", "a:-b", ""},
		{"set but empty", "[${EMPTY}]", "[]", ""},
		{"dollar without brace is literal", "$A and $", "$A and $", ""},
		{"no refs", "plain", "plain", ""},
		{"missing variable", "--key=${MISSING_TOKEN}", "", "environment variable MISSING_TOKEN is not set (used in args[0])"},
		{"unterminated", "${A", "", `args[0]: unterminated "${"`},
		{"bad name", "${A-B}", "", "invalid variable reference"},
		{"empty name", "${}", "", "invalid variable reference"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			workdir, home := dirs(t)
			arg, _ := json.Marshal(tt.arg)
			writeFile(t, config.GlobalPath(home), `{"mcpServers":{"s":{"command":"run","args":[`+string(arg)+`]}}}`)
			cfg := load(t, workdir, home, env)
			s, ok := cfg.Server("s")
			if tt.warn != "" {
				if ok || len(cfg.Warnings) != 1 || cfg.Warnings[0].Server != "s" || !strings.Contains(cfg.Warnings[0].Problem, tt.warn) {
					t.Fatalf("loaded=%v warnings=%q, want skipped with %q", ok, warningsText(cfg), tt.warn)
				}
				return
			}
			if !ok {
				t.Fatalf("not loaded: %s", warningsText(cfg))
			}
			if s.Args[0] != tt.want {
				t.Errorf("expanded %q, want %q", s.Args[0], tt.want)
			}
		})
	}
}

// Expansion covers command, args, url, header values, env values and the
// OAuth client id, but not keys, and Raw keeps the spelling.
func TestExpansionFields(t *testing.T) {
	workdir, home := dirs(t)
	writeFile(t, config.GlobalPath(home), `{"mcpServers":{
		"std":{"command":"${BIN}/srv","args":["--k=${K}"],"env":{"${K}":"${V}"}},
		"web":{"url":"https://${HOST}/mcp","headers":{"Authorization":"Bearer ${TOK}"},"oauth":{"clientId":"${CID}"}}}}`)
	cfg := load(t, workdir, home, map[string]string{
		"BIN": "/opt", "K": "key", "V": "val", "HOST": "api.example.com", "TOK": "t0k", "CID": "client-1"})
	if w := warningsText(cfg); w != "" {
		t.Fatalf("warnings: %s", w)
	}
	std, _ := cfg.Server("std")
	if std.Command != "/opt/srv" || !reflect.DeepEqual(std.Args, []string{"--k=key"}) ||
		!reflect.DeepEqual(std.Env, map[string]string{"${K}": "val"}) {
		t.Errorf("stdio: %+v", std)
	}
	if !strings.Contains(string(std.Raw), "${BIN}/srv") {
		t.Errorf("raw lost its spelling: %s", std.Raw)
	}
	web, _ := cfg.Server("web")
	if web.URL != "https://api.example.com/mcp" || web.Headers["Authorization"] != "Bearer t0k" || web.OAuth.ClientID != "client-1" {
		t.Errorf("http: %+v oauth %+v", web, web.OAuth)
	}
}

// Several missing variables are named in one warning, and no warning ever
// carries a resolved value (here: a URL that fails after expansion).
func TestExpansionWarningsNameVariablesNotValues(t *testing.T) {
	const canary = "CANARY-9f3e-secret"
	workdir, home := dirs(t)
	writeFile(t, config.GlobalPath(home), `{"mcpServers":{
		"two":{"url":"https://h/mcp","headers":{"A":"${MISS_A}","B":"x${MISS_B:-}${MISS_C}"}},
		"badurl":{"url":"${BASE}/mcp?token=${TOK}"},
		"nl":{"url":"https://h/mcp","headers":{"X":"${NL}"}}}}`)
	cfg := load(t, workdir, home, map[string]string{"BASE": "not-a-url-" + canary, "TOK": canary, "NL": canary + "\r\nEvil: 1"})
	if len(cfg.Servers) != 0 || len(cfg.Warnings) != 3 {
		t.Fatalf("servers %q warnings %q", names(cfg.Servers), warningsText(cfg))
	}
	w := warningsText(cfg)
	for _, want := range []string{"MISS_A is not set (used in headers.A)", "MISS_C is not set (used in headers.B)", "absolute http(s) URL", "headers.X: value contains a line break"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
	if strings.Contains(w, "MISS_B") {
		t.Errorf("a variable with a default was reported missing:\n%s", w)
	}
	if strings.Contains(w, canary) {
		t.Errorf("a resolved value leaked into a warning:\n%s", w)
	}
}
