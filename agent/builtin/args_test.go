package builtin_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/tool"
)

func TestSpecs(t *testing.T) {
	want := map[string]tool.Kind{
		"read_file": tool.KindRead, "list_dir": tool.KindRead, "search": tool.KindRead,
		"write_file": tool.KindEdit, "edit_file": tool.KindEdit, "bash": tool.KindExecute,
	}
	tools := builtin.Tools(builtin.Options{})
	if len(tools) != len(want) {
		t.Fatalf("%d tools", len(tools))
	}
	for _, tl := range tools {
		s := tl.Spec()
		if want[s.Name] != s.Kind {
			t.Errorf("%s: kind %q", s.Name, s.Kind)
		}
		if len(s.Description) < 100 {
			t.Errorf("%s: description too short: %q", s.Name, s.Description)
		}
		var schema struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(s.Parameters, &schema); err != nil {
			t.Fatalf("%s: schema: %v", s.Name, err)
		}
		if schema.Type != "object" || schema.AdditionalProperties == nil || *schema.AdditionalProperties {
			t.Errorf("%s: schema must be an object with additionalProperties false", s.Name)
		}
		for _, r := range schema.Required {
			if _, ok := schema.Properties[r]; !ok {
				t.Errorf("%s: required %q is not a property", s.Name, r)
			}
		}
		if s.Strict {
			t.Errorf("%s: strict, but optional fields make the schema strict-incompatible", s.Name)
		}
	}
}

func TestBadArguments(t *testing.T) {
	_, env := workspace(t)
	cases := []struct {
		tool, args string
		want       []string
	}{
		{"read_file", `{"path":"a","bogus":1}`, []string{`unknown argument "bogus"`, "path, offset, limit"}},
		{"read_file", `{"path":3}`, []string{`"path" must be a string, not number`}},
		{"read_file", `{"path":"a","offset":"2"}`, []string{`"offset" must be an integer, not string`}},
		{"read_file", `{"path":"a","offset":1.5}`, []string{`"offset" must be an integer`}},
		{"read_file", `{}`, []string{`"path" is required`}},
		{"read_file", `{"path":null}`, []string{`"path" is required`}},
		{"read_file", `[1]`, []string{"must be a JSON object"}},
		{"read_file", `not json`, []string{"must be a JSON object"}},
		{"list_dir", `{"recursive":true}`, []string{`unknown argument "recursive"`}},
		{"search", `{"path":"a"}`, []string{`"pattern" is required`}},
		{"search", `{"pattern":"a","maxMatches":"10"}`, []string{`"maxMatches" must be an integer`}},
		{"write_file", `{"path":"a","content":["x"]}`, []string{`"content" must be a string, not array`}},
		{"edit_file", `{"path":"a","edits":[{"old_string":"a","new_string":"b","extra":1}]}`, []string{"unknown field", "extra"}},
		{"edit_file", `{"path":"a","edits":{"old_string":"a"}}`, []string{`must be an array`}},
		{"bash", `{"cmd":"ls"}`, []string{`unknown argument "cmd"`, "command"}},
		{"bash", `{"command":"ls","timeout":"5"}`, []string{`"timeout" must be a number`}},
	}
	for _, c := range cases {
		a, err := prepare(t, c.tool, env, c.args)
		if err == nil {
			t.Errorf("%s %s: no error (action %+v)", c.tool, c.args, a)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.tool+": ") {
			t.Errorf("%s %s: error does not name the tool: %v", c.tool, c.args, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %s: error %q lacks %q", c.tool, c.args, err, w)
			}
		}
	}
}

func TestNoRoots(t *testing.T) {
	for name, args := range map[string]string{
		"read_file":  `{"path":"x"}`,
		"list_dir":   `{}`,
		"search":     `{"pattern":"x"}`,
		"write_file": `{"path":"x","content":"x"}`,
		"edit_file":  `{"path":"x","old_string":"a","new_string":"b"}`,
		"bash":       `{"command":"ls"}`,
	} {
		_, err := prepare(t, name, tool.Env{}, args)
		wantErr(t, err, "no workspace folder")
	}
}
