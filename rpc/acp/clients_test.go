package acp

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/permission"
)

// What real ACP clients do with kin, emulated from their own code.

// A client's key for "always" sends the option it mapped to the kind
// allow_always. Each mapping is the client's own (read from its source):
//   - CodeCompanion (lua/codecompanion/interactions/chat/acp/
//     request_permission.lua, build_kind_map): map[kind] = optionId over the
//     options in order, so the last option of a kind wins;
//   - avante.nvim (lua/avante/ui/acp_confirm_adapter.lua, map_acp_options):
//     the same, last of a kind;
//   - agent-shell (agent-shell--make-permission-action): the first option
//     of a kind gets the "!" key, later ones none.
var kindMappings = map[string]func(opts []PermissionOption, kind string) string{
	"codecompanion": func(opts []PermissionOption, kind string) string {
		m := map[string]string{}
		for _, o := range opts {
			m[o.Kind] = o.OptionID
		}
		return m[kind]
	},
	"avante": func(opts []PermissionOption, kind string) string {
		id := ""
		for _, o := range opts {
			if o.Kind == kind {
				id = o.OptionID
			}
		}
		return id
	},
	"agent-shell": func(opts []PermissionOption, kind string) string {
		for _, o := range opts {
			if o.Kind == kind {
				return o.OptionID
			}
		}
		return ""
	},
}

// Pressing "always" in a client that maps options by kind grants the call
// for this session only: kin offers one allow_always option over ACP, and
// never the grant for every session, which stays out of grants.json.
func TestAlwaysInAClientThatMapsByKindIsThisSessionOnly(t *testing.T) {
	for client, pick := range kindMappings {
		t.Run(client, func(t *testing.T) {
			w := newWorld(t)
			c := w.connect(nil)
			c.initialize(nil)
			var asked []RequestPermissionRequest
			c.on(MethodRequestPermission, func(p json.RawMessage) (any, error) {
				var r RequestPermissionRequest
				_ = json.Unmarshal(p, &r)
				asked = append(asked, r)
				return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": pick(r.Options, "allow_always")}}, nil
			})
			sid := c.newSession()
			w.model.Script(
				modeltest.Reply{Calls: []modeltest.Call{{ID: "call_1", Name: "bash", Arguments: `{"command":"echo one"}`}}},
				modeltest.Reply{Calls: []modeltest.Call{{ID: "call_2", Name: "bash", Arguments: `{"command":"echo two"}`}}},
				modeltest.Reply{Text: []string{"ok"}},
			)
			c.prompt(sid, text("run echo twice"))
			if len(asked) != 1 {
				t.Fatalf("asked %d times; the session grant should answer the second echo", len(asked))
			}
			kinds := map[string]int{}
			for _, o := range asked[0].Options {
				kinds[o.Kind]++
				if o.OptionID == permission.AllowAlwaysPermanent {
					t.Errorf("the permanent grant is offered over ACP: %+v", o)
				}
			}
			for kind, n := range kinds {
				if n > 1 {
					t.Errorf("%d options of kind %s: %+v", n, kind, asked[0].Options)
				}
			}
			if b, err := os.ReadFile(w.home + "/grants.json"); err == nil && strings.Contains(string(b), `"permanent"`) {
				t.Errorf("a permanent grant was kept: %s", b)
			}

			// A second session is asked again: the grant was this session's.
			sid2 := c.newSession()
			w.model.Script(
				modeltest.Reply{Calls: []modeltest.Call{{ID: "call_3", Name: "bash", Arguments: `{"command":"echo three"}`}}},
				modeltest.Reply{Text: []string{"ok"}},
			)
			c.prompt(sid2, text("run echo again"))
			if len(asked) != 2 {
				t.Errorf("the other session was not asked (%d requests)", len(asked))
			}
		})
	}
}

// An answer naming the permanent grant (a client that kept an old option
// id) is refused: the call is denied, nothing is granted.
func TestAnOptionKinDidNotOfferDenies(t *testing.T) {
	w := newWorld(t)
	c := w.connect(nil)
	c.initialize(nil)
	c.answer(permission.AllowAlwaysPermanent)
	sid := c.newSession()
	marker := w.ws + "/ran"
	w.model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_1", Name: "bash", Arguments: `{"command":"touch ` + marker + `"}`}}},
		modeltest.Reply{Text: []string{"ok"}},
	)
	c.prompt(sid, text("touch it"))
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran on an option kin did not offer")
	}
	if s, meta := c.lastCallStatus("call_1"); s != StatusFailed || meta["kin"].(map[string]any)["status"] != "denied" {
		t.Errorf("the call ended %s %v", s, meta)
	}
}

// avante.nvim creating a file: it answers kin's first read of the missing
// file "not found", then, once the person approved, holds an empty buffer
// for it. kin takes that as the same starting point and writes; a buffer
// that holds text is still a conflict.
func TestAvanteCreatesAFile(t *testing.T) {
	for _, tc := range []struct {
		name, after string
		wrote       bool
	}{
		{"an empty new buffer", "", true},
		{"a buffer someone typed into", "typed meanwhile\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			c := w.connect(nil)
			c.initialize(map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}})
			approved := false
			c.on(MethodRequestPermission, func(json.RawMessage) (any, error) {
				approved = true
				return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil
			})
			c.on(MethodReadTextFile, func(json.RawMessage) (any, error) {
				if !approved {
					return nil, &jsonrpc2.Error{Code: CodeResourceNotFound, Message: "ENOENT: no such file"}
				}
				return ReadTextFileResponse{Content: tc.after}, nil
			})
			var wrote []WriteTextFileRequest
			c.on(MethodWriteTextFile, func(p json.RawMessage) (any, error) {
				var r WriteTextFileRequest
				_ = json.Unmarshal(p, &r)
				wrote = append(wrote, r)
				return struct{}{}, nil
			})
			sid := c.newSession()
			w.model.Script(
				modeltest.Reply{Calls: []modeltest.Call{{ID: "call_w", Name: "write_file", Arguments: `{"path":"new.txt","content":"hello\n"}`}}},
				modeltest.Reply{Text: []string{"ok"}},
			)
			c.prompt(sid, text("create new.txt"))
			s, meta := c.lastCallStatus("call_w")
			if tc.wrote {
				if len(wrote) != 1 || wrote[0].Content != "hello\n" || s != StatusCompleted {
					t.Errorf("the new file was not written: %+v, the call ended %s %v", wrote, s, meta)
				}
				return
			}
			if len(wrote) != 0 || s != StatusFailed {
				t.Errorf("kin wrote over a buffer that holds text: %+v, the call ended %s", wrote, s)
			}
		})
	}
}

// An empty text delta from the model is never an agent_message_chunk (the
// schema's text block needs its text); the text around it arrives whole.
func TestAnEmptyDeltaIsNeverSent(t *testing.T) {
	w := newWorld(t)
	c := w.connect(nil)
	c.initialize(nil)
	sid := c.newSession()
	w.model.Script(modeltest.Reply{Text: []string{"", "Hello", "", " there", ""}, Reasoning: []modeltest.Reasoning{{Summary: []string{"", "hm"}}}})
	c.prompt(sid, text("hi"))
	got := ""
	for _, kind := range []string{UpdateAgentMessage, UpdateAgentThought} {
		for _, u := range c.updates(kind) {
			content := u["content"].(map[string]any)
			s, ok := content["text"].(string)
			if !ok || s == "" {
				t.Errorf("%s without text: %v", kind, u)
			}
			if kind == UpdateAgentMessage {
				got += s
			}
		}
	}
	if got != "Hello there" {
		t.Errorf("the answer arrived as %q", got)
	}
}
