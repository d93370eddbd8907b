package config_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kin-dev/kin/mcp/config"
)

// Each malformed entry is skipped with a warning naming the problem, and
// its well-formed sibling still loads.
func TestMalformedEntriesAreSkipped(t *testing.T) {
	tests := []struct {
		name  string
		key   string // server name ("" allowed)
		entry string
		want  string // substring of the warning
	}{
		{"entry not an object", "x", `"npx"`, "not a JSON object"},
		{"entry is an array", "x", `["npx"]`, "not a JSON object"},
		{"command not a string", "x", `{"command":5}`, `"command" must be a string`},
		{"args not an array", "x", `{"command":"a","args":"-y"}`, `"args" must be an array of strings`},
		{"args item not a string", "x", `{"command":"a","args":["-y",1]}`, `args[1] must be a string`},
		{"args item null", "x", `{"command":"a","args":[null]}`, `args[0] must be a string`},
		{"env not an object", "x", `{"command":"a","env":["A=1"]}`, `"env" must be an object of strings`},
		{"env value not a string", "x", `{"command":"a","env":{"A":true}}`, `env.A must be a string`},
		{"env key with =", "x", `{"command":"a","env":{"A=B":"1"}}`, `invalid variable name`},
		{"headers value not a string", "x", `{"url":"https://h/mcp","headers":{"A":1}}`, `headers.A must be a string`},
		{"header name invalid", "x", `{"url":"https://h/mcp","headers":{"Bad Header":"1"}}`, `invalid header name`},
		{"url not a string", "x", `{"url":{"href":"https://h"}}`, `"url" must be a string`},
		{"timeout a string", "x", `{"command":"a","timeout":"10"}`, `"timeout" must be a whole number`},
		{"timeout negative", "x", `{"command":"a","timeout":-1}`, `"timeout" must be a whole number`},
		{"timeout fractional", "x", `{"command":"a","timeout":1.5}`, `"timeout" must be a whole number`},
		{"disabled a string", "x", `{"command":"a","disabled":"yes"}`, `"disabled" must be true or false`},
		{"allowed_tools a string", "x", `{"command":"a","allowed_tools":"read"}`, `"allowed_tools" must be an array`},
		{"both allowlist spellings", "x", `{"command":"a","allowed_tools":[],"allowedTools":["r"]}`, `both "allowed_tools" and "allowedTools"`},
		{"type not a string", "x", `{"type":1,"command":"a"}`, `"type" must be a string`},
		{"empty name", "", `{"command":"a"}`, "empty server name"},
		{"blank name", "  ", `{"command":"a"}`, "empty server name"},
		{"both command and url", "x", `{"command":"a","url":"https://h/mcp"}`, `both "command" and "url"`},
		{"neither command nor url", "x", `{"args":["a"]}`, `neither "command" nor "url"`},
		{"empty command", "x", `{"command":""}`, `"command" is empty`},
		{"empty url", "x", `{"url":""}`, `"url" is empty`},
		{"relative url", "x", `{"url":"/mcp"}`, "absolute http(s) URL"},
		{"url without scheme", "x", `{"url":"example.com/mcp"}`, "absolute http(s) URL"},
		{"non-http scheme", "x", `{"url":"ftp://example.com/mcp"}`, "scheme must be http or https"},
		{"file scheme", "x", `{"type":"http","url":"file:///etc/passwd"}`, "absolute http(s) URL"},
		{"plain http to a remote host", "x", `{"url":"http://example.com/mcp"}`, "must use https"},
		{"unknown transport", "x", `{"type":"grpc","url":"https://h/mcp"}`, `unknown transport type "grpc"`},
		{"sse is deprecated", "x", `{"type":"sse","url":"https://h/sse"}`, `deprecated and not supported; use "http"`},
		{"ws is unsupported", "x", `{"type":"ws","url":"wss://h/ws"}`, `type "ws" is not supported`},
		{"stdio type without command", "x", `{"type":"stdio","url":"https://h/mcp"}`, `type "stdio" needs "command"`},
		{"http type without url", "x", `{"type":"http","command":"a"}`, `type "http" needs "url"`},
		{"auth unknown", "x", `{"url":"https://h/mcp","auth":"basic"}`, `unknown auth "basic"`},
		{"auth on stdio", "x", `{"command":"a","auth":"oauth"}`, "apply only to http servers"},
		{"oauth not an object", "x", `{"url":"https://h/mcp","oauth":"yes"}`, `"oauth" must be an object`},
		{"oauth non-loopback host", "x", `{"url":"https://h/mcp","oauth":{"callbackHost":"evil.example"}}`, "loopback only"},
		{"oauth localhost needs a port", "x", `{"url":"https://h/mcp","oauth":{"callbackHost":"localhost"}}`, "requires callbackPort"},
		{"oauth port too large", "x", `{"url":"https://h/mcp","oauth":{"callbackPort":70000}}`, "callbackPort must be from 1 to 65535"},
		{"oauth both spellings", "x", `{"url":"https://h/mcp","oauth":{"clientId":"a","client_id":"b"}}`, `both "clientId" and "client_id"`},
		{"oauth port a string", "x", `{"url":"https://h/mcp","oauth":{"callback_port":"80"}}`, `oauth."callback_port" must be a whole number`},
		{"unterminated reference", "x", `{"command":"a","args":["${OOPS"]}`, `args[0]: unterminated "${"`},
		{"invalid reference", "x", `{"command":"a","env":{"K":"${1X}"}}`, "env.K: invalid variable reference"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			workdir, home := dirs(t)
			key := fmt.Sprintf("%q", tt.key)
			writeFile(t, config.ProjectPath(workdir),
				`{"mcpServers":{"good":{"command":"ok"},`+key+`:`+tt.entry+`}}`)
			cfg := load(t, workdir, home, nil)
			if got := names(cfg.Servers); got != "good@project" {
				t.Errorf("servers = %q, want only the good one", got)
			}
			if len(cfg.Warnings) != 1 {
				t.Fatalf("warnings = %q, want one", warningsText(cfg))
			}
			w := cfg.Warnings[0]
			if w.Server != tt.key || w.File != config.ProjectPath(workdir) || !strings.Contains(w.Problem, tt.want) {
				t.Errorf("warning = %+v, want server %q and problem containing %q", w, tt.key, tt.want)
			}
		})
	}
}

func TestMalformedFiles(t *testing.T) {
	tests := []struct{ name, content, want string }{
		{"bad JSON", `{"mcpServers": {"a": {"command": "x"},}}`, "invalid JSON"},
		{"truncated", `{"mcpServers": {"a": {"command": "x"}`, "unexpected end"},
		{"top level array", `[{"command":"x"}]`, "not a JSON object"},
		{"mcpServers an array", `{"mcpServers":[{"command":"x"}]}`, "mcpServers"},
		{"trailing data", `{"mcpServers":{}} {}`, "data after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			workdir, home := dirs(t)
			writeFile(t, config.GlobalPath(home), tt.content)
			cfg := load(t, workdir, home, nil)
			if len(cfg.Servers) != 0 || len(cfg.Warnings) != 1 || cfg.Warnings[0].Server != "" ||
				!strings.Contains(cfg.Warnings[0].Problem, tt.want) {
				t.Fatalf("servers %q warnings %q", names(cfg.Servers), warningsText(cfg))
			}
		})
	}
}

func TestValidEntries(t *testing.T) {
	tests := []struct {
		name  string
		entry string
		check func(t *testing.T, s config.Server)
	}{
		{"command defaults to stdio", `{"command":"npx","args":["-y","pkg"],"timeout":1500}`, func(t *testing.T, s config.Server) {
			want := config.Server{Transport: config.TransportStdio, Command: "npx", Args: []string{"-y", "pkg"}, TimeoutMS: 1500}
			if s.Transport != want.Transport || s.Command != want.Command || !reflect.DeepEqual(s.Args, want.Args) || s.TimeoutMS != 1500 {
				t.Errorf("got %+v", s)
			}
		}},
		{"url defaults to http", `{"url":"https://h/mcp"}`, func(t *testing.T, s config.Server) {
			if s.Transport != config.TransportHTTP || s.URL != "https://h/mcp" {
				t.Errorf("got %+v", s)
			}
		}},
		{"streamable-http is http", `{"type":"streamable-http","url":"https://h/mcp"}`, func(t *testing.T, s config.Server) {
			if s.Transport != config.TransportHTTP {
				t.Errorf("transport %q", s.Transport)
			}
		}},
		{"type is case-insensitive", `{"type":"HTTP","url":"https://h/mcp"}`, func(t *testing.T, s config.Server) {
			if s.Transport != config.TransportHTTP {
				t.Errorf("transport %q", s.Transport)
			}
		}},
		{"plain http to loopback", `{"url":"http://127.0.0.1:8080/mcp"}`, func(t *testing.T, s config.Server) {
			if s.URL != "http://127.0.0.1:8080/mcp" {
				t.Errorf("url %q", s.URL)
			}
		}},
		{"allowlist absent", `{"command":"a"}`, func(t *testing.T, s config.Server) {
			if s.AllowedToolsSet || s.AllowedTools != nil {
				t.Errorf("allowlist %v set=%v", s.AllowedTools, s.AllowedToolsSet)
			}
		}},
		{"allowlist present but empty exposes nothing", `{"command":"a","allowed_tools":[]}`, func(t *testing.T, s config.Server) {
			if !s.AllowedToolsSet || s.AllowedTools == nil || len(s.AllowedTools) != 0 {
				t.Errorf("allowlist %#v set=%v", s.AllowedTools, s.AllowedToolsSet)
			}
		}},
		{"allowedTools spelling", `{"command":"a","allowedTools":["read"]}`, func(t *testing.T, s config.Server) {
			if !s.AllowedToolsSet || !reflect.DeepEqual(s.AllowedTools, []string{"read"}) {
				t.Errorf("allowlist %#v", s.AllowedTools)
			}
		}},
		{"oauth block implies auth, camelCase", `{"url":"https://h/mcp","oauth":{"clientId":"app","callbackHost":"localhost","callbackPort":8765,"scopes":["offline_access"]}}`, func(t *testing.T, s config.Server) {
			want := &config.OAuth{ClientID: "app", CallbackHost: "localhost", CallbackPort: 8765, Scopes: []string{"offline_access"}}
			if s.Auth != "oauth" || !reflect.DeepEqual(s.OAuth, want) {
				t.Errorf("auth %q oauth %+v", s.Auth, s.OAuth)
			}
		}},
		{"oauth snake_case and default host", `{"url":"https://h/mcp","oauth":{"client_id":"app","callback_port":9000}}`, func(t *testing.T, s config.Server) {
			want := &config.OAuth{ClientID: "app", CallbackHost: "127.0.0.1", CallbackPort: 9000}
			if s.Auth != "oauth" || !reflect.DeepEqual(s.OAuth, want) {
				t.Errorf("auth %q oauth %+v", s.Auth, s.OAuth)
			}
		}},
		{"auth oauth without block", `{"url":"https://h/mcp","auth":"oauth"}`, func(t *testing.T, s config.Server) {
			if s.Auth != "oauth" || s.OAuth != nil {
				t.Errorf("auth %q oauth %+v", s.Auth, s.OAuth)
			}
		}},
		{"null fields count as absent", `{"command":"a","args":null,"allowed_tools":null}`, func(t *testing.T, s config.Server) {
			if s.Args != nil || s.AllowedToolsSet {
				t.Errorf("got %+v", s)
			}
		}},
		{"unknown fields are ignored", `{"command":"a","x-vendor":{"deep":[1,2]},"description":"hi"}`, func(t *testing.T, s config.Server) {
			if s.Command != "a" || !strings.Contains(string(s.Raw), "x-vendor") {
				t.Errorf("got %+v", s)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			workdir, home := dirs(t)
			writeFile(t, config.GlobalPath(home), `{"mcpServers":{"s":`+tt.entry+`}}`)
			cfg := load(t, workdir, home, nil)
			if w := warningsText(cfg); w != "" {
				t.Fatalf("warnings: %s", w)
			}
			s, ok := cfg.Server("s")
			if !ok {
				t.Fatal("server not loaded")
			}
			if s.File != config.GlobalPath(home) || s.Scope != config.ScopeGlobal || string(s.Raw) != tt.entry {
				t.Errorf("file %q scope %q raw %s", s.File, s.Scope, s.Raw)
			}
			tt.check(t, s)
		})
	}
}
