package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/mcptest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// toolServer is an in-process MCP server named name with n tools shaped
// like a real server's (a paragraph of description, four described
// parameters); the tool named special (if any) has the description desc.
// calls counts the calls of every tool.
func toolServer(t testing.TB, name string, n int, special, desc string) (url string, calls *atomic.Int64) {
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
	calls = new(atomic.Int64)
	for i := range n {
		tn, d := fmt.Sprintf("op_%02d", i), fmt.Sprintf("Operation %d of %s: reads or changes records of the %s service, "+
			"paginated; returns JSON with the matching records, a cursor for the next page and the total count. "+
			"Use filters to narrow the result; dates are RFC 3339.", i, name, name)
		if i == 0 && special != "" {
			tn, d = special, desc
		}
		srv.AddTool(&mcp.Tool{Name: tn, Description: d, InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"query":{"type":"string","description":"Free text matched against the record's title and body."},` +
			`"cursor":{"type":"string","description":"The cursor a previous page returned, to fetch the next page."},` +
			`"limit":{"type":"integer","description":"At most this many records (1 to 100, default 20)."},` +
			`"since":{"type":"string","description":"Only records changed after this time (RFC 3339)."}},"required":["query"]}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				calls.Add(1)
				return mcptest.Text(name + " ran"), nil
			})
	}
	return mcptest.ServeHTTP(t, srv), calls
}

// offered are the names of the tools a request describes.
func offered(r modeltest.Request) []string {
	var out []string
	for _, t := range r.Tools {
		if n, _ := t["name"].(string); n != "" {
			out = append(out, n)
		}
	}
	return out
}

func has(names []string, n string) bool { return slices.Contains(names, n) }

// Two servers of 30 tools are over the default budget (40 tools): the
// first request offers search_tools and names the deferred tools in one
// line, not their definitions. The model searches, the found tool is
// offered in full from the next request on (and in the next turn), its
// call is approved as any; a deferred tool called by its listed name
// without a search is asked for too (and denied here: it never ran), and is
// described from then on. Built-in tools are always offered.
func TestMCPToolSearchDefersAndFinds(t *testing.T) {
	urlGH, callsGH := toolServer(t, "gh", 30, "create_issue", "Create an issue in a repository, with a title and a body.")
	urlDB, callsDB := toolServer(t, "db", 30, "", "")
	w := newWorld(t, map[string]any{"gh": map[string]any{"type": "http", "url": urlGH}, "db": map[string]any{"type": "http", "url": urlDB}})
	ed := w.editor()
	answer(ed, map[string]string{"c2": "allow_once", "c3": "deny"})
	ed.Wait("mcp/status", rpctest.All(rpctest.Field("server", "gh"), rpctest.Field("state", "connected")))
	ed.Wait("mcp/status", rpctest.All(rpctest.Field("server", "db"), rpctest.Field("state", "connected")))

	w.model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "search_tools", Arguments: `{"query":"create an issue"}`}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c2", Name: "mcp__gh__create_issue", Arguments: `{"query":"q"}`}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c3", Name: "mcp__db__op_07", Arguments: `{"query":"q"}`}}},
		modeltest.Reply{Text: []string{"done"}},
		modeltest.Reply{Text: []string{"again"}},
	)
	sid := newSession(t, ed)
	if done := completed(ed, start(t, ed, sid, "file a bug")); done["status"] != "completed" {
		t.Fatalf("turn %v", done)
	}
	if done := completed(ed, start(t, ed, sid, "and now?")); done["status"] != "completed" {
		t.Fatalf("second turn %v", done)
	}
	reqs := w.model.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests", len(reqs))
	}
	first := offered(reqs[0])
	if !has(first, "search_tools") || !has(first, "read_file") || !has(first, "bash") {
		t.Fatalf("first request offers %v", first)
	}
	for _, n := range first {
		if strings.HasPrefix(n, "mcp__") {
			t.Errorf("first request describes the deferred %s", n)
		}
	}
	line := ""
	for _, l := range strings.Split(reqs[0].Instructions, "\n") {
		if strings.Contains(l, "Not yet described:") {
			line = l
		}
	}
	if !strings.Contains(line, "mcp__gh__create_issue") || !strings.Contains(line, "mcp__db__op_29") || !strings.Contains(line, "60 MCP tools") {
		t.Fatalf("instructions do not name the deferred tools in one line: %q", line)
	}
	// the search result names the tool, framed as the servers' text
	res := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "c1"), rpctest.Field("status", "completed")))
	if out, _ := res["output"].(string); !strings.Contains(out, "mcp__gh__create_issue: ") || !strings.Contains(out, "<untrusted-mcp-tools") {
		t.Fatalf("search output %v", res["output"])
	}
	second := offered(reqs[1])
	if !has(second, "mcp__gh__create_issue") || has(second, "mcp__db__op_07") {
		t.Fatalf("second request offers %v", second)
	}
	if strings.Contains(reqs[1].Instructions, "mcp__gh__create_issue") {
		t.Error("a found tool is still listed as not described")
	}
	// the found tool's call was asked for and ran once
	if !asked(ed, "c2") || callsGH.Load() != 1 {
		t.Errorf("found tool: asked %v, ran %d", asked(ed, "c2"), callsGH.Load())
	}
	// called by name without a search: asked as any call (denied: it never ran)
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "c3"), rpctest.Field("status", "denied")))
	if !asked(ed, "c3") || callsDB.Load() != 0 {
		t.Errorf("deferred tool called by name: asked %v, ran %d", asked(ed, "c3"), callsDB.Load())
	}
	for i, want := range []string{"mcp__gh__create_issue", "mcp__db__op_07"} {
		for _, r := range reqs[3:] {
			if !has(offered(r), want) {
				t.Errorf("%d: a later request does not describe %s: %v", i, want, offered(r))
			}
		}
	}
	if n := len(offered(reqs[4])); n > 2*len(first) {
		t.Errorf("the next turn offers %d tools", n)
	}

	// After kin restarts, the tools the resumed conversation called are
	// described again without a search; the others are still deferred.
	ed.MustCall("shutdown", nil, nil)
	ed2 := w.editor()
	answer(ed2, nil)
	ed2.Wait("mcp/status", rpctest.All(rpctest.Field("server", "gh"), rpctest.Field("state", "connected")))
	ed2.Wait("mcp/status", rpctest.All(rpctest.Field("server", "db"), rpctest.Field("state", "connected")))
	ed2.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, nil)
	w.model.Script(modeltest.Reply{Text: []string{"back"}})
	if done := completed(ed2, start(t, ed2, sid, "still there?")); done["status"] != "completed" {
		t.Fatalf("resumed turn %v", done)
	}
	all := w.model.Requests()
	resumed := offered(all[len(all)-1])
	if !has(resumed, "mcp__gh__create_issue") || !has(resumed, "mcp__db__op_07") || has(resumed, "mcp__db__op_08") || !has(resumed, "search_tools") {
		t.Errorf("after a restart the resumed session offers %v", resumed)
	}
}

// Under the budget nothing is deferred and no search_tools is offered; a
// setting of {"tools": 0} defers every MCP tool.
func TestMCPToolSearchThresholdSetting(t *testing.T) {
	url, _ := toolServer(t, "few", 3, "", "")
	for _, c := range []struct {
		settings string
		deferred bool
	}{{"", false}, {`{"toolSearchThreshold": {"tools": 0}}`, true}} {
		w := newWorld(t, map[string]any{"few": map[string]any{"type": "http", "url": url}})
		if c.settings != "" {
			if err := os.WriteFile(filepath.Join(w.home, "settings.json"), []byte(c.settings), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		ed := w.editor()
		answer(ed, nil)
		ed.Wait("mcp/status", rpctest.All(rpctest.Field("server", "few"), rpctest.Field("state", "connected")))
		w.model.Script(modeltest.Reply{Text: []string{"hi"}})
		completed(ed, start(t, ed, newSession(t, ed), "hello"))
		names := offered(w.model.Requests()[0])
		if has(names, "search_tools") != c.deferred || has(names, "mcp__few__op_01") == c.deferred {
			t.Errorf("settings %q: offered %v", c.settings, names)
		}
	}
}

// BenchmarkFirstRequestBytes reports the bytes of a session's first model
// request with 5 servers of 60 tools each, with tool search (the default
// budget) and without (a budget no list reaches).
func BenchmarkFirstRequestBytes(b *testing.B) {
	servers := map[string]any{}
	for i := range 5 {
		url, _ := toolServer(b, fmt.Sprintf("s%d", i), 60, "", "")
		servers[fmt.Sprintf("s%d", i)] = map[string]any{"type": "http", "url": url}
	}
	for _, c := range []struct{ name, settings string }{
		{"before", `{"toolSearchThreshold": {"tools": -1, "bytes": -1}}`},
		{"after", `{}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			home, ws := b.TempDir(), b.TempDir()
			m := modeltest.New()
			defer m.Close()
			mj, _ := json.Marshal(map[string]any{"mcpServers": servers})
			os.WriteFile(filepath.Join(home, "mcp.json"), mj, 0o600)
			os.WriteFile(filepath.Join(home, "settings.json"), []byte(c.settings), 0o600)
			vars := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": m.URL()}
			ed := rpctest.Start(b, rpc.Options{Home: home, Cwd: ws, Version: "test", Logger: zap.NewNop(),
				Getenv: func(k string) string { return vars[k] },
				Tools:  func([]string) []tool.Tool { return builtin.Tools(builtin.Options{}) },
				MCP:    &rpc.MCPOptions{}})
			ed.Initialize(ws)
			answer(ed, nil)
			for i := range 5 {
				ed.Wait("mcp/status", rpctest.All(rpctest.Field("server", fmt.Sprintf("s%d", i)), rpctest.Field("state", "connected")))
			}
			var size, tools int
			b.ResetTimer()
			for range b.N {
				m.Script(modeltest.Reply{Text: []string{"hi"}})
				var s rpc.SessionResult
				ed.MustCall("session/new", nil, &s)
				var res rpc.TurnStartResult
				ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: s.Session.SessionID, Input: "hello"}, &res)
				ed.Wait("turn/completed", rpctest.Field("turnId", res.TurnID))
				reqs := m.Requests()
				last := reqs[len(reqs)-1]
				size, tools = len(last.Raw), len(last.Tools)
			}
			b.ReportMetric(float64(size), "request-bytes")
			b.ReportMetric(float64(tools), "tools")
		})
	}
}
