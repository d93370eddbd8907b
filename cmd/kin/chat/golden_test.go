package chat_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/rpc"
)

// golden returns the frames recorded for method in rpc/testdata/golden:
// the params of its notifications, or the results of its requests.
func golden(t *testing.T, method string) []json.RawMessage {
	t.Helper()
	name := strings.ReplaceAll(strings.ReplaceAll(method, "$", ""), "/", "_") + ".json"
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "rpc", "testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Frames []struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
		} `json:"frames"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var out []json.RawMessage
	for _, fr := range f.Frames {
		switch {
		case fr.Method != "" && fr.Params != nil && !strings.Contains(method, "/respond"):
			out = append(out, fr.Params)
		case fr.Result != nil:
			out = append(out, fr.Result)
		}
	}
	return out
}

// Every approval kin recorded is shown with each of its options by the
// name kin gave it, and the refusal last as the default.
func TestGoldenApprovalsOnScreen(t *testing.T) {
	for _, raw := range golden(t, "approval/request") {
		var r rpc.ApprovalRequest
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		f, s := fakeChat(t)
		f.notify("approval/request", json.RawMessage(raw))
		// The prompt ends with the refusal, the default, in capitals.
		out := s.out.waitFor(t, "N: "+r.Options[len(r.Options)-1].Name+"] ")
		for _, o := range r.Options {
			if !strings.Contains(out, ": "+o.Name) {
				t.Errorf("%s: option %q is not shown as sent:\n%s", r.RequestID, o.Name, out)
			}
		}
		title := r.Title
		if r.Kind == "tool_call" && r.Server != "" {
			title = "" // an MCP call's block is spec 000's, without a title
		}
		for _, want := range []string{title, r.Command, r.Destination, r.ServerTool, r.Warning} {
			if want != "" && !strings.Contains(out, want) {
				t.Errorf("%s: %q is not shown:\n%s", r.RequestID, want, out)
			}
		}
		s.send("")
		if got := f.waitCall("approval/respond", 1); got["decision"] != "deny" {
			t.Errorf("Enter sent %v", got)
		}
		s.send("/quit")
		s.wait()
	}
}

// Every form kin recorded is asked field by field, each by its title, with
// its options by their titles.
func TestGoldenFormsOnScreen(t *testing.T) {
	for _, raw := range golden(t, "elicitation/request") {
		var r rpc.ElicitationRequest
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		if r.Mode != "form" {
			continue
		}
		f, s := fakeChat(t)
		f.notify("elicitation/request", json.RawMessage(raw))
		who := "MCP server " + r.Server
		if r.Source == "kin" {
			who = "kin" // kin's own question (its ask tool)
		}
		s.out.waitFor(t, "["+who+" asks] "+r.Message)
		seen := 0
		for i, fl := range r.Fields {
			all := s.out.waitCount(t, "): ", i+1)
			out := all[seen:]
			seen = len(all)
			if !strings.Contains(out, fl.Title) {
				t.Errorf("field %s: title %q not shown:\n%s", fl.Name, fl.Title, out)
			}
			for _, name := range fl.EnumNames {
				if !strings.Contains(out, ") "+name+"\n") {
					t.Errorf("field %s: option %q not shown:\n%s", fl.Name, name, out)
				}
			}
			answer := ""
			switch fl.Type {
			case "string":
				answer = "Ana"
				if fl.Format == "email" {
					answer = "ana@example.com"
				}
				if fl.Pattern != "" {
					answer = "ABC-1234" // the golden form's member number
				}
			case "integer", "number":
				answer = "7"
			case "enum", "multi_select":
				answer = "1"
			case "boolean":
				answer = "y"
			}
			s.send(answer)
		}
		got := f.waitCall("elicitation/respond", 1)
		content, _ := got["content"].(map[string]any)
		if got["action"] != "accept" || len(content) != len(r.Fields) {
			t.Errorf("respond %v", got)
		}
		s.send("/quit")
		s.wait()
	}
}

// The manager's list, the grants and the session list kin recorded are
// shown whole: every server, warning, grant and session.
func TestGoldenListsOnScreen(t *testing.T) {
	f, conn := newFake(t)
	mcp, grants, sessions := golden(t, "mcp/list")[0], golden(t, "grants/list")[0], golden(t, "session/list")
	f.set("mcp/list", json.RawMessage(mcp))
	f.set("grants/list", json.RawMessage(grants))
	f.set("session/list", json.RawMessage(sessions[len(sessions)-1]))
	s := run(t, conn, true, nil)
	s.out.waitFor(t, "You> ")
	var l rpc.MCPListResult
	var g rpc.GrantsListResult
	var sl rpc.SessionListResult
	_ = json.Unmarshal(mcp, &l)
	_ = json.Unmarshal(grants, &g)
	_ = json.Unmarshal(sessions[len(sessions)-1], &sl)
	s.send("/mcp")
	out := s.out.waitCount(t, "You> ", 2)
	for _, r := range append(append(l.Servers, l.Foreign...), l.Shadowed...) {
		if !strings.Contains(out, r.Name+"  ") {
			t.Errorf("server %s not listed:\n%s", r.Name, out)
		}
	}
	for _, w := range append(l.Warnings, l.Notices...) {
		if !strings.Contains(out, w) {
			t.Errorf("%q not shown:\n%s", w, out)
		}
	}
	s.send("/grants")
	out = s.out.waitCount(t, "You> ", 3)
	for _, gr := range g.Grants {
		if !strings.Contains(out, gr.ID+"  ") || !strings.Contains(out, gr.Label) {
			t.Errorf("grant %s not listed:\n%s", gr.ID, out)
		}
	}
	s.send("/sessions")
	out = s.out.waitCount(t, "You> ", 4)
	for _, ss := range sl.Sessions {
		if !strings.Contains(out, ss.SessionID) || !strings.Contains(out, ss.Title) {
			t.Errorf("session %s not listed:\n%s", ss.SessionID, out)
		}
	}
	s.send("/quit")
	s.wait()
}
