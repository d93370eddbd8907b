package config_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kin-dev/kin/mcp/config"
)

const canary = "CANARY-7d1c-do-not-show"

func TestDisplay(t *testing.T) {
	env := map[string]string{"TOKEN": canary, "HOST": "api.example.com", "DIR": "/" + canary}
	tests := []struct {
		name  string
		entry string
		want  config.Display
	}{
		{
			name:  "stdio command line with masked env",
			entry: `{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/data"],"env":{"B_KEY":"${TOKEN}","A_PLAIN":"literal-` + canary + `"}}`,
			want: config.Display{Name: "s", Scope: config.ScopeGlobal, Transport: config.TransportStdio,
				Launch: "npx -y @modelcontextprotocol/server-filesystem /data", Env: []string{"A_PLAIN=●●●●", "B_KEY=●●●●"}},
		},
		{
			name:  "args from expansion show the reference, defaults dropped",
			entry: `{"command":"${DIR}/bin/srv","args":["--token=${TOKEN}","${TOKEN:-fallback-secret}","two words",""]}`,
			want: config.Display{Name: "s", Scope: config.ScopeGlobal, Transport: config.TransportStdio,
				Launch: `${DIR}/bin/srv --token=${TOKEN} ${TOKEN} "two words" ""`},
		},
		{
			name:  "control and bidi characters are escaped",
			entry: `{"command":"run","args":["a\u202eb","x\ny"]}`,
			want: config.Display{Name: "s", Scope: config.ScopeGlobal, Transport: config.TransportStdio,
				Launch: `run "a\u202eb" "x\ny"`},
		},
		{
			name:  "http: userinfo stripped, query and fragment masked, headers masked",
			entry: `{"url":"https://user:${TOKEN}@${HOST}/mcp?token=${TOKEN}&tenant=acme&flag#frag","headers":{"Authorization":"Bearer ${TOKEN}","X-Api-Key":"${TOKEN}","X-Plain":"literal-` + canary + `"}}`,
			want: config.Display{Name: "s", Scope: config.ScopeGlobal, Transport: config.TransportHTTP,
				Launch:  "https://${HOST}/mcp?token=●●●●&tenant=●●●●&●●●●#frag",
				Headers: []string{"Authorization: Bearer ●●●●", "X-Api-Key: ●●●●", "X-Plain: ●●●●"}},
		},
		{
			name:  "oauth shows the public client id and callback",
			entry: `{"url":"https://h/mcp","oauth":{"clientId":"app-123","callbackHost":"localhost","callbackPort":8765,"scopes":["openid","offline_access"]}}`,
			want: config.Display{Name: "s", Scope: config.ScopeGlobal, Transport: config.TransportHTTP,
				Launch: "https://h/mcp", Auth: "oauth", OAuth: `client app-123, callback localhost port 8765, scopes openid offline_access`},
		},
		{
			name:  "disabled server described from its raw entry",
			entry: `{"command":"srv","args":["${TOKEN}"],"disabled":true,"timeout":30000,"allowed_tools":[]}`,
			want: config.Display{Name: "s", Scope: config.ScopeGlobal, Transport: config.TransportStdio,
				Launch: "srv ${TOKEN}", Disabled: true, TimeoutMS: 30000, AllowedTools: []string{}, AllowedToolsSet: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			workdir, home := dirs(t)
			writeFile(t, config.GlobalPath(home), `{"mcpServers":{"s":`+tt.entry+`}}`)
			cfg := load(t, workdir, home, env)
			s, ok := cfg.Server("s")
			if !ok {
				t.Fatalf("not loaded: %s", warningsText(cfg))
			}
			got := s.Display()
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Display =\n%#v\nwant\n%#v", got, tt.want)
			}
			if all := fmt.Sprintf("%#v %s", got, got.Line()); strings.Contains(all, canary) {
				t.Errorf("canary leaked: %s", all)
			}
		})
	}
}

// A Server built by hand (no Raw) is still masked.
func TestDisplayWithoutRaw(t *testing.T) {
	s := config.Server{Name: "h", Transport: config.TransportHTTP,
		URL:     "https://u:" + canary + "@h.example/mcp?key=" + canary,
		Headers: map[string]string{"Authorization": "Basic " + canary, "Cookie": canary}}
	d := s.Display()
	if d.Launch != "https://h.example/mcp?key=●●●●" || !reflect.DeepEqual(d.Headers, []string{"Authorization: Basic ●●●●", "Cookie: ●●●●"}) {
		t.Errorf("got %#v", d)
	}
	e := config.Server{Name: "e", Transport: config.TransportStdio, Command: "srv", Env: map[string]string{"K": canary}}
	if d := e.Display(); strings.Contains(fmt.Sprintf("%#v", d), canary) || d.Env[0] != "K=●●●●" {
		t.Errorf("got %#v", d)
	}
}

func TestMaskURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://example.com/mcp", "https://example.com/mcp"},
		{"https://example.com:8443/a/b", "https://example.com:8443/a/b"},
		{"https://user:pass@example.com/mcp", "https://example.com/mcp"},
		{"https://tok@example.com", "https://example.com"},
		{"https://example.com/mcp?api_key=abc&x=1", "https://example.com/mcp?api_key=●●●●&x=●●●●"},
		{"https://example.com/mcp?abc", "https://example.com/mcp?●●●●"},
		{"https://example.com/cb#access_token=abc", "https://example.com/cb#access_token=●●●●"},
		{"https://platform.openai.com/docs/guides/function-calling#tool-calls", "https://platform.openai.com/docs/guides/function-calling#tool-calls"}, // an anchor, not a secret (issue 23)
		{"https://${HOST}/mcp?t=${T:-dflt}", "https://${HOST}/mcp?t=●●●●"},
		{"https://example.com/${BROKEN", "●●●●"},
		{"user:pass@host", "●●●●"},
	}
	for _, tt := range tests {
		if got := config.MaskURL(tt.in); got != tt.want {
			t.Errorf("MaskURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMaskHeader(t *testing.T) {
	tests := []struct{ name, value, want string }{
		{"Authorization", "Bearer abc.def", "Bearer ●●●●"},
		{"authorization", "token ghp_x", "token ●●●●"},
		{"Proxy-Authorization", "Basic dXNlcg==", "Basic ●●●●"},
		{"Authorization", "abc", "●●●●"},
		{"Authorization", "${TOKEN}", "●●●●"},
		{"Authorization", "Bearer ${TOKEN}", "Bearer ●●●●"},
		{"X-Api-Key", "Bearer abc", "●●●●"},
		{"Accept", "application/json", "●●●●"},
	}
	for _, tt := range tests {
		if got := config.MaskHeader(tt.name, tt.value); got != tt.want {
			t.Errorf("MaskHeader(%q, %q) = %q, want %q", tt.name, tt.value, got, tt.want)
		}
	}
}

// A repository's entry (.kin/mcp.json, or a root .mcp.json listed for
// adoption) names the variables it reads wherever its values are masked:
// the person approving it must see that ${GITHUB_TOKEN} is sent, not
// ●●●●. Literals and ${VAR:-default} defaults stay masked, but for the
// env of a .kin/mcp.json entry, which holds no secret in clear and
// decides what runs (NODE_OPTIONS=--require ./hook.js): it is shown as
// written, defaults included (TestARepositorysDefaultsShowInItsLaunch).
// The person's own global entry keeps every value masked.
func TestDisplayNamesARepositorysVariables(t *testing.T) {
	env := map[string]string{"GITHUB_TOKEN": canary, "HOST": "h.example"}
	entry := `{"type":"http","url":"https://user:${GITHUB_TOKEN}@${HOST}/mcp?a=x-${GITHUB_TOKEN:-` + canary + `}&b=lit-` + canary + `#t=${GITHUB_TOKEN}",` +
		`"headers":{"Authorization":"Bearer ${GITHUB_TOKEN}","X-Plain":"` + canary + `","X-Mix":"k-${GITHUB_TOKEN}"}}`
	stdio := `{"command":"srv","env":{"LOG_LEVEL":"${GITHUB_TOKEN}","NODE_OPTIONS":"--require ./hook.js","MODE":"${MODE:-debug}"}}`
	foreignStdio := `{"command":"srv","env":{"TOKEN":"` + canary + `","LOG_LEVEL":"${GITHUB_TOKEN}"}}`
	workdir, home := dirs(t)
	doc := `{"mcpServers":{"web":` + entry + `,"cli":` + stdio + `}}`
	writeFile(t, config.ProjectPath(workdir), doc)
	writeFile(t, config.ForeignPath(workdir), `{"mcpServers":{"other":`+entry+`,"theirs":`+foreignStdio+`}}`)
	writeFile(t, config.GlobalPath(home), `{"mcpServers":{"mine":`+entry+`}}`)
	cfg := load(t, workdir, home, env)
	named := config.Display{Launch: "https://●●●●${GITHUB_TOKEN}@${HOST}/mcp?a=●●●●${GITHUB_TOKEN}&b=●●●●#t=${GITHUB_TOKEN}",
		Headers: []string{"Authorization: Bearer ${GITHUB_TOKEN}", "X-Mix: ●●●●${GITHUB_TOKEN}", "X-Plain: ●●●●"}}
	var got []config.Display
	for _, s := range append(append([]config.Server{}, cfg.Servers...), cfg.Foreign...) {
		got = append(got, s.Display())
	}
	seen := 0
	for _, d := range got {
		if all := fmt.Sprintf("%#v", d); strings.Contains(all, canary) {
			t.Errorf("canary leaked: %s", all)
		}
		switch d.Name {
		case "web", "other":
			seen++
			if d.Launch != named.Launch || !reflect.DeepEqual(d.Headers, named.Headers) {
				t.Errorf("%s: %q %q, want %q %q", d.Name, d.Launch, d.Headers, named.Launch, named.Headers)
			}
		case "cli":
			seen++
			if want := []string{"LOG_LEVEL=${GITHUB_TOKEN}", "MODE=${MODE:-debug}", `NODE_OPTIONS="--require ./hook.js"`}; !reflect.DeepEqual(d.Env, want) {
				t.Errorf("cli env %q, want %q", d.Env, want)
			}
		case "theirs":
			seen++
			if want := []string{"LOG_LEVEL=${GITHUB_TOKEN}", "TOKEN=●●●●"}; !reflect.DeepEqual(d.Env, want) {
				t.Errorf("foreign env %q, want %q", d.Env, want)
			}
		case "mine":
			seen++
			if d.Launch != "https://${HOST}/mcp?a=●●●●&b=●●●●#t=●●●●" || !reflect.DeepEqual(d.Headers, []string{"Authorization: Bearer ●●●●", "X-Mix: ●●●●", "X-Plain: ●●●●"}) {
				t.Errorf("global entry: %q %q", d.Launch, d.Headers)
			}
		}
	}
	if seen != 5 {
		t.Fatalf("displays %+v (%s)", got, warningsText(cfg))
	}
}
