// Command client is kin's MCP client under the official MCP conformance
// suite (npm @modelcontextprotocol/conformance, client side). The suite
// starts a test server for one scenario and runs
//
//	client <server-url>
//
// with MCP_CONFORMANCE_SCENARIO naming the scenario. The client drives
// kin's real client path, hardening included: it writes the server into a
// throwaway global mcp.json and runs a manager.Manager over it (config
// loading, the launch approval, connect's hardened streamable-HTTP
// transport with the discover-probe fallback, catalog discovery and vetting,
// calltool's calls and result mapping, and the manager's elicitation relay).
//
// The suite is non-interactive, so the Host here plays the person: it
// allows the launch once (nothing is persisted), approves every tool call
// as shown, and accepts a form elicitation without typing anything: a
// required field gets the default kin showed for it, an optional one is
// left out, so that kin's own path (the manager's relay, then the SDK) must
// fill in the schema's defaults, as SEP-1034 asks of a client. Nothing else
// is automatic: a scenario whose tool kin did not list, or whose call does
// not complete, exits non-zero.
//
// Diagnostics go to stderr, tool output to stdout; the suite saves both.
// run.sh beside this folder builds and runs it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/calltool"
	"github.com/kin-dev/kin/mcp/manager"
)

// serverName is the configured name of the scenario's server.
const serverName = "conformance"

// deadline bounds one scenario; the suite kills the client after 30 s.
const deadline = 25 * time.Second

// step is what a scenario does once the server is connected: at most one
// tool call, whose result must complete and contain want.
type step struct {
	tool string
	args string
	want string
	// more are calls made after this one, in order, each checked alike.
	more []step
	// echoSchemaOf, when set, makes args {"schema": <the input schema kin
	// offers the model for that tool>}.
	echoSchemaOf string
}

// scenarios maps the suite's client scenarios to kin's actions. A scenario
// not listed here only connects and lists the tools (the suite's checks
// decide whether that is enough).
var scenarios = map[string]*step{
	// initialize: the handshake (and the tool listing every kin connect does).
	"initialize": nil,
	// tools_call: call add_numbers; the server records the arguments.
	"tools_call": {tool: "add_numbers", args: `{"a":5,"b":3}`, want: "The sum of 5 and 3 is 8"},
	// SEP-1034: the tool asks back with a form of optional fields that all
	// have defaults; the person accepts without typing, and the answer must
	// reach the server with every default filled in.
	"elicitation-sep1034-client-defaults": {tool: "test_client_elicitation_defaults", args: `{}`, want: "Elicitation completed"},
	// SEP-1699: the server closes the call's SSE stream after a priming
	// event (retry 500 ms) and answers on the resumed GET stream.
	"sse-retry": {tool: "test_reconnection", args: `{}`, want: "Reconnection test completed successfully"},
	// SEP-2243: tools with invalid x-mcp-header annotations are left out
	// (a warning says which); the valid one is called.
	"http-invalid-tool-headers": {tool: "valid_tool", args: `{"region":"eu-west1"}`, want: "Tool call received"},
	// SEP-2243: annotated parameters are mirrored into Mcp-Param-* headers
	// (by go-sdk); a null one is omitted.
	"http-custom-headers": {tool: "test_custom_headers", args: `{"region":"us-west1","priority":5,"query":"q","verbose":true,"non_ascii_val":"Zürich","whitespace_val":" padded ","internal_space_val":"a b","crlf_val":"a\r\nb"}`, want: "Custom headers test completed",
		more: []step{{tool: "test_custom_headers_null", args: `{"region":"eu","priority":1,"query":"q"}`, want: "Custom headers test completed"}}},
	// SEP-2322: multi round-trip requests; each input-required round is
	// answered and the call continued with the server's request state.
	"sep-2322-client-request-state": {tool: "test_mrtr_echo_state", args: `{}`, more: []step{
		{tool: "test_mrtr_no_state", args: `{}`},
		{tool: "test_mrtr_unrelated", args: `{}`},
		{tool: "test_mrtr_no_result_type", args: `{}`},
	}},
	// SEP-1613/2106: the input schema kin offers the model keeps the 2020-12
	// keywords; it is echoed back as kin holds it.
	"json-schema-2020-12-preservation": {tool: "json_schema_echo", echoSchemaOf: "json_schema_2020_12_tool"},
}

func main() {
	os.Exit(run())
}

func run() int {
	if len(os.Args) < 2 {
		logf("usage: client <server-url> (MCP_CONFORMANCE_SCENARIO names the scenario)")
		return 2
	}
	url := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	logf("scenario %q, server %s", scenario, url)
	st, known := scenarios[scenario]
	if !known {
		logf("scenario %q has no kin action: connecting and listing only", scenario)
	}

	tmp, err := os.MkdirTemp("", "kin-conformance-")
	if err != nil {
		logf("temp dir: %v", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	home, work := filepath.Join(tmp, "home"), filepath.Join(tmp, "work")
	if err := writeConfig(home, work, url); err != nil {
		logf("config: %v", err)
		return 1
	}

	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	h := &host{}
	m := manager.New(manager.Options{Workdir: work, KinHome: home, Host: h, Version: "conformance"})
	defer m.Close()
	m.Start(ctx)

	row, ok := serverRow(m)
	if !ok || row.State != manager.StateConnected {
		logf("FAIL: server %s is %s: %s", serverName, row.State, row.LastError)
		return 1
	}
	if !h.launched.Load() {
		logf("FAIL: kin connected without asking for the launch")
		return 1
	}
	var names []string
	for _, t := range m.Tools() {
		names = append(names, t.Spec().Name)
	}
	logf("connected: %d tools %v", row.Tools, names)
	if strings.HasPrefix(scenario, "sep-2640-client-verify-") {
		return loadSkills(ctx, m)
	}
	if st == nil {
		return 0
	}

	steps := append([]step{*st}, st.more...)
	for _, st := range steps {
		t := find(m, st.tool)
		if t == nil {
			logf("FAIL: kin did not offer tool %q (offered %v)", st.tool, names)
			return 1
		}
		args := st.args
		if st.echoSchemaOf != "" {
			of := find(m, st.echoSchemaOf)
			if of == nil {
				logf("FAIL: kin did not offer tool %q", st.echoSchemaOf)
				return 1
			}
			b, _ := json.Marshal(map[string]any{"schema": of.Def().Schema})
			args = string(b)
		}
		res, err := call(ctx, t, args)
		if err != nil {
			logf("FAIL: %v", err)
			return 1
		}
		fmt.Println(res.Output)
		logf("call %s: %s", st.tool, res.Status)
		if res.Status != tool.StatusCompleted || !strings.Contains(res.Output, st.want) {
			logf("FAIL: tool %s: status %s, want completed with %q", st.tool, res.Status, st.want)
			return 1
		}
	}
	if scenario == "elicitation-sep1034-client-defaults" && h.elicits.Load() != 1 {
		logf("FAIL: %d elicitations reached the person, want 1", h.elicits.Load())
		return 1
	}
	return 0
}

// writeConfig writes <home>/mcp.json with one http server at url.
func writeConfig(home, work, url string) error {
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{
		serverName: map[string]any{"type": "http", "url": url},
	}}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(home, "mcp.json"), b, 0o600)
}

// loadSkills is SEP-2640's host loading every skill the server lists, as
// the model's load of a skill does (rpc's mcpSkills.Load): SKILL.md is read
// and verified against the manifest kin holds (size, digest, front matter);
// only a skill that passed has a listed file read next, as a model would
// read one the skill names. A skill kin refuses is not a failure of the
// client: refusing the tampered one is what the verify-* scenarios check
// (the suite sees whether the supporting file was read after it).
func loadSkills(ctx context.Context, m *manager.Manager) int {
	sks := m.Skills()
	if len(sks) == 0 {
		logf("FAIL: kin holds no skill of the server")
		return 1
	}
	for _, sk := range sks {
		body, err := m.ReadSkill(ctx, sk, "")
		if err != nil {
			logf("skill %s refused: %v", sk.URI, err)
			continue
		}
		logf("skill %s loaded (%d bytes)", sk.URI, len(body))
		for _, f := range sk.Files {
			if rel := strings.TrimPrefix(f.URI, sk.Root()+"/"); rel != f.URI && rel != "SKILL.md" {
				if _, err := m.ReadSkill(ctx, sk, rel); err != nil {
					logf("skill file %s refused: %v", f.URI, err)
				}
			}
		}
	}
	return 0
}

func serverRow(m *manager.Manager) (manager.Row, bool) {
	for _, r := range m.List().Servers {
		if r.Name == serverName {
			return r, true
		}
	}
	return manager.Row{}, false
}

// find returns the tool the server calls name, as kin offers it.
func find(m *manager.Manager, name string) *calltool.Tool {
	for _, t := range m.Tools() {
		if ct, ok := t.(*calltool.Tool); ok && ct.Def().Server == serverName && ct.Def().Name == name {
			return ct
		}
	}
	return nil
}

// call prepares the call as the turn loop does, approves what the approval
// shows, and runs it.
func call(ctx context.Context, t *calltool.Tool, args string) (tool.Result, error) {
	env := tool.Env{SessionID: "conformance", TurnID: "t1", CallID: "c1"}
	a, err := t.Prepare(ctx, env, json.RawMessage(args))
	if err != nil {
		return tool.Result{}, fmt.Errorf("prepare %s: %v", t.Def().Name, err)
	}
	if ap := a.Approval; ap != nil {
		logf("approval: %s (server %s, destination %s, arguments %s); approved", ap.Title, ap.Server, ap.Destination, oneLine(ap.Arguments))
	}
	return a.Run(ctx, nil), nil
}

// host is the person at the keyboard, answering as the scenario requires.
// Its methods may run on any goroutine.
type host struct {
	launched atomic.Bool
	elicits  atomic.Int32
}

func (h *host) ApproveLaunch(_ context.Context, r manager.LaunchRequest) (string, error) {
	h.launched.Store(true)
	logf("launch approval: %s %s %s; allowed once", r.Server, r.Transport, r.Destination)
	return manager.DecisionAllowOnce, nil
}

// Elicit accepts a form without typing: a required field takes the default
// kin passed on, an optional one is omitted (kin must apply its default).
// A form with a required field that has no default, and every url
// elicitation, is declined.
func (h *host) Elicit(_ context.Context, r manager.ElicitRequest) (manager.ElicitResult, error) {
	h.elicits.Add(1)
	b, _ := json.Marshal(r.Fields)
	logf("elicitation (%s) from %s: %q fields %s", r.Mode, r.Server, r.Message, b)
	if r.Mode != "form" {
		logf("elicitation declined: mode %s", r.Mode)
		return manager.ElicitResult{Action: "decline"}, nil
	}
	content := map[string]any{}
	for _, f := range r.Fields {
		switch {
		case !f.Required:
		case f.Default != nil:
			content[f.Name] = f.Default
		default:
			logf("elicitation declined: required field %s has no default", f.Name)
			return manager.ElicitResult{Action: "decline"}, nil
		}
	}
	b, _ = json.Marshal(content)
	logf("elicitation accepted with %s", b)
	return manager.ElicitResult{Action: "accept", Content: content}, nil
}

func (h *host) Status(s manager.Status) {
	logf("status: %s %s (%d tools) %s", s.Server, s.State, s.Tools, s.Error)
}

func (h *host) Notice(level, msg string) { logf("notice %s: %s", level, msg) }

func (h *host) RevokeGrant(key, keep string) bool {
	logf("grant revoked: %s", key)
	return false
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "kin-conformance: "+format+"\n", args...)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
