package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/permission"
)

// A subagent's mode is what the call asks for (ask when nothing), never
// wider than its parent's; arguments a model gets wrong are refused with
// what to send instead.
func TestDelegateArgumentsAndMode(t *testing.T) {
	for _, c := range []struct {
		args   string
		parent permission.Mode
		want   permission.Mode
		err    string
	}{
		{`{"task":"look"}`, permission.ModeAutoEdit, permission.ModeAsk, ""},
		{`{"task":"look","mode":"agent"}`, permission.ModeAutoEdit, permission.ModeAgent, ""},
		{`{"task":"look","mode":"auto-edit"}`, permission.ModeAutoEdit, permission.ModeAutoEdit, ""},
		{`{"task":"look","mode":"auto-edit"}`, permission.ModeAgent, permission.ModeAgent, ""},
		{`{"task":"look","mode":"auto-edit"}`, permission.ModeAsk, permission.ModeAsk, ""},
		{`{"task":"look","mode":"agent"}`, permission.ModeAsk, permission.ModeAsk, ""},
		{`{"task":"look","mode":"root"}`, permission.ModeAgent, "", `mode "root" is not one of`},
		{`{"task":"   "}`, permission.ModeAgent, "", `"task" is required`},
		{`{"mode":"ask"}`, permission.ModeAgent, "", `"task" is required`},
		{`{"task":"look","model":"gpt-9"}`, permission.ModeAgent, "", `unknown field "model"`},
		{`{"task":"` + strings.Repeat("x", maxTaskBytes+1) + `"}`, permission.ModeAgent, "", "name the files"},
	} {
		task, asked, err := parseDelegate(json.RawMessage(c.args))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%.60s: err %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil || task != "look" {
			t.Errorf("%s: %q %v", c.args, task, err)
			continue
		}
		if got := permission.Narrower(asked, c.parent); got != c.want {
			t.Errorf("%s in a %s session: %s, want %s", c.args, c.parent, got, c.want)
		}
	}
}
