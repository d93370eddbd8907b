package permission

import (
	"context"
	"testing"

	"github.com/kin-dev/kin/agent/ask"
	"github.com/kin-dev/kin/agent/tool"
)

type noPerson struct{ asked int }

func (n *noPerson) Asked(ask.Question)                { n.asked++ }
func (n *noPerson) Resolved(ask.Question, ask.Answer) {}

// TestDecideByMode pins the gate's order: the mode, the call's needs, the
// grants, then the person (here nobody answers: a cancelled context).
func TestDecideByMode(t *testing.T) {
	roots := []string{"/ws"}
	edit := &tool.Approval{Title: "Edit a", Diffs: []tool.Diff{{Path: "/ws/a.go"}}, Grant: &tool.Grant{Key: "tool:edit_file"}}
	outside := &tool.Approval{Title: "Edit b", Diffs: []tool.Diff{{Path: "/elsewhere/b.go"}}}
	env := &tool.Approval{Title: "Edit .env", Diffs: []tool.Diff{{Path: "/ws/.env"}}, AlwaysAsk: true}
	contained := &tool.Approval{Title: "Run go test", Sandbox: &tool.Sandbox{Confined: true}, AutoEditAllows: true}
	unconfined := &tool.Approval{Title: "Run make", Sandbox: &tool.Sandbox{Network: true}, AutoEditAllows: true}
	plain := &tool.Approval{Title: "Run ls", Sandbox: &tool.Sandbox{Confined: true}}
	mcp := &tool.Approval{Title: "Call x", Server: "docs", Diffs: []tool.Diff{{Path: "/ws/a"}}}
	ro := &tool.Approval{Title: "Call y", Server: "docs", AutoAllow: true}
	for _, c := range []struct {
		name     string
		mode     Mode
		kind     tool.Kind
		readOnly bool
		ap       *tool.Approval
		reason   string
		allowed  bool
	}{
		{"ask refuses an edit", ModeAsk, tool.KindEdit, false, edit, ReasonMode, false},
		{"ask refuses a command", ModeAsk, tool.KindExecute, false, plain, ReasonMode, false},
		{"ask lets a read run", ModeAsk, tool.KindRead, true, nil, ReasonNotNeeded, true},
		{"ask lets a read-only MCP tool run", ModeAsk, tool.KindOther, true, ro, ReasonNotNeeded, true},
		{"agent asks for an edit", ModeAgent, tool.KindEdit, false, edit, ReasonCancelled, false},
		{"auto-edit applies an edit in the roots", ModeAutoEdit, tool.KindEdit, false, edit, ReasonMode, true},
		{"auto-edit asks outside the roots", ModeAutoEdit, tool.KindEdit, false, outside, ReasonCancelled, false},
		{"auto-edit asks for .env", ModeAutoEdit, tool.KindEdit, false, env, ReasonCancelled, false},
		{"auto-edit asks for a command", ModeAutoEdit, tool.KindExecute, false, plain, ReasonCancelled, false},
		{"auto-edit runs a contained command when the setting allows", ModeAutoEdit, tool.KindExecute, false, contained, ReasonMode, true},
		{"auto-edit never runs an unconfined one", ModeAutoEdit, tool.KindExecute, false, unconfined, ReasonCancelled, false},
		{"auto-edit asks for an MCP call", ModeAutoEdit, tool.KindEdit, false, mcp, ReasonCancelled, false},
	} {
		n := &noPerson{}
		g := NewGate(ask.New(n), &Grants{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		out := g.Decide(ctx, Call{SessionID: "s_1", Mode: c.mode, Roots: roots, ToolKind: c.kind, ReadOnly: c.readOnly, Approval: c.ap}, nil)
		if out.Reason != c.reason || out.Allowed() != c.allowed {
			t.Errorf("%s: %+v", c.name, out)
		}
		if asked := n.asked > 0; asked != (c.reason == ReasonCancelled) {
			t.Errorf("%s: asked %d times", c.name, n.asked)
		}
	}
}
