package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/settings"
	"github.com/kin-dev/kin/agent/tool"
)

func planCall(id, step string) modeltest.Reply {
	return modeltest.Reply{Calls: []modeltest.Call{{ID: id, Name: PlanToolName, Arguments: `{"entries":[{"content":"` + step + `","status":"pending"}]}`}}}
}

func planStep(p []session.PlanEntry) string {
	if len(p) != 1 {
		return ""
	}
	return p[0].Content
}

// The attack: the model makes a plan in turn 1 and replaces it in turn 2;
// the person rolls turn 2 back. The model no longer sees turn 2's
// update_plan, but /plan still showed turn 2's plan (and a fork taken
// after the rollback started with it), while a kin that resumed the
// session showed it too. The plan in force is turn 1's again, in the live
// kin, in a fork, and after a restart alike.
func TestARolledBackTurnsPlanIsNoLongerInForce(t *testing.T) {
	home := t.TempDir()
	svc, m, rec, _, ws := limitService(t, home, settings.Limits{})
	sid := newSession(t, svc, ws)
	m.Script(planCall("p1", "first"), modeltest.Reply{Text: []string{"planned"}},
		planCall("p2", "second"), modeltest.Reply{Text: []string{"replanned"}})
	ask(t, svc, rec, sid, TextInput("plan it"))
	ask(t, svc, rec, sid, TextInput("plan again"))
	if p, _ := svc.Plan(sid, nil); planStep(p) != "second" {
		t.Fatalf("plan before the rollback: %+v", p)
	}
	if _, err := svc.Rollback(t.Context(), sid, 1, nil); err != nil {
		t.Fatal(err)
	}
	if p, _ := svc.Plan(sid, nil); planStep(p) != "first" {
		t.Errorf("after rolling back the turn that replanned, /plan shows %+v; want turn 1's plan", p)
	}
	f, err := svc.Fork(sid, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := svc.Plan(f.Info.SessionID, nil); planStep(p) != "first" {
		t.Errorf("a fork after the rollback starts with the plan %+v; want turn 1's", p)
	}
	svc.Shutdown()
	svc2, _, _, _, _ := limitService(t, home, settings.Limits{})
	if p, _ := svc2.Plan(sid, nil); planStep(p) != "first" {
		t.Errorf("after a restart, /plan shows %+v; want turn 1's plan, as the live kin showed", p)
	}
	// Rolling back turn 1 too leaves no plan.
	if _, err := svc2.Rollback(t.Context(), sid, 1, nil); err != nil {
		t.Fatal(err)
	}
	if p, _ := svc2.Plan(sid, nil); p != nil {
		t.Errorf("with every planning turn rolled back, /plan shows %+v", p)
	}
}

// readOnlySkillSession writes into home the skill read-only-review, whose
// allowed-tools (allowed, space-separated) leave write_file out, and starts
// a service on home with a session in auto-edit mode: a write there is
// applied unasked unless a loaded skill narrows it.
func readOnlySkillSession(t *testing.T, home, allowed string) (*Service, *modeltest.Server, *screen, *answerer, string, string) {
	t.Helper()
	dir := filepath.Join(home, "skills", "read-only-review")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "SKILL.md"), "---\nname: read-only-review\ndescription: Reviews without changing anything.\nallowed-tools: "+allowed+"\n---\nOnly read.\n")
	svc, m, rec, a, ws := limitService(t, home, settings.Limits{})
	s, err := svc.NewSession(SessionOptions{Roots: []string{ws}, Mode: permission.ModeAutoEdit})
	if err != nil {
		t.Fatal(err)
	}
	return svc, m, rec, a, ws, s.Info.SessionID
}

// The attack: a skill whose allowed-tools leave write_file out is loaded
// in a turn the person then rolls back. The model no longer sees the skill
// (nor its instructions), yet its allowed-tools went on narrowing every
// call of the session: a write in auto-edit mode was asked of the person
// (and refused here) for a skill that, to the model and after a restart,
// is not loaded.
func TestARolledBackTurnsSkillNoLongerNarrows(t *testing.T) {
	home := t.TempDir()
	svc, m, rec, a, ws, sid := readOnlySkillSession(t, home, "read_file")
	m.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "s1", Name: SkillToolName, Arguments: `{"name":"read-only-review"}`}}},
		modeltest.Reply{Text: []string{"loaded"}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "w1", Name: "write_file", Arguments: `{"path":"out.txt","content":"written\n"}`}}},
		modeltest.Reply{Text: []string{"wrote"}},
	)
	ask(t, svc, rec, sid, TextInput("review it"))
	if got := svc.sessions[sid].skillFolders(); len(got) != 1 {
		t.Fatalf("skill not loaded: %v", got)
	}
	if _, err := svc.Rollback(t.Context(), sid, 1, nil); err != nil {
		t.Fatal(err)
	}
	ask(t, svc, rec, sid, TextInput("write out.txt"))
	if _, err := os.Stat(filepath.Join(ws, "out.txt")); err != nil {
		a.mu.Lock()
		t.Errorf("the write was not applied in auto-edit mode (asked: %+v): the rolled-back turn's skill still narrowed it", a.asked)
		a.mu.Unlock()
	}
	if got := svc.sessions[sid].skillFolders(); len(got) != 0 {
		t.Errorf("the rolled-back skill's folder is still readable: %v", got)
	}
}

// A skill loaded by a turn that remains stays in force when a later load
// of it is rolled back.
func TestASkillLoadedByARemainingTurnStaysLoaded(t *testing.T) {
	sess := &Session{}
	sess.loadSkill(loadedSkill{name: "s", dir: "/a", turn: "t1"})
	sess.loadSkill(loadedSkill{name: "s", dir: "/b", turn: "t2"})
	sess.loadSkill(loadedSkill{name: "r", dir: "/r", allowed: []string{"read_file"}, turn: "t2"})
	if got := sess.narrowedBy("bash"); got != "r" {
		t.Fatalf("narrowedBy = %q", got)
	}
	sess.unloadTurns([]string{"t2"})
	if got := sess.skillFolders(); len(got) != 1 || got[0] != "/a" {
		t.Errorf("folders after the rollback: %v, want [/a]", got)
	}
	if got := sess.narrowedBy("bash"); got != "" {
		t.Errorf("still narrowed by %q", got)
	}
}

// deferrableTool stands for an MCP tool: deferred when there are many.
type deferrableTool struct{ name string }

func (d deferrableTool) Spec() tool.Spec {
	return tool.Spec{Name: d.name, Description: "an MCP tool", Parameters: json.RawMessage(`{"type":"object"}`), Kind: tool.KindOther}
}
func (deferrableTool) Deferrable() bool { return true }
func (deferrableTool) ReadOnly() bool   { return true }
func (deferrableTool) Prepare(context.Context, tool.Env, json.RawMessage) (*tool.Action, error) {
	return &tool.Action{Run: func(context.Context, func(string)) tool.Result {
		return tool.Result{Status: tool.StatusCompleted, Output: "ok"}
	}}, nil
}

func offersTool(r modeltest.Request, name string) bool {
	for _, tl := range r.Tools {
		if tl["name"] == name {
			return true
		}
	}
	return false
}

// A deferred MCP tool found by a turn the person rolls back is not offered
// whole any more: the model no longer sees the call that found it, and a
// kin that resumed the session would not offer it either.
func TestARolledBackTurnsFoundToolIsDeferredAgain(t *testing.T) {
	home := t.TempDir()
	svc, m, rec, _, ws := limitService(t, home, settings.Limits{})
	tools := builtin.Tools(builtin.Options{})
	for i := range 45 {
		tools = append(tools, deferrableTool{name: fmt.Sprintf("mcp_tool_%d", i)})
	}
	svc.opts.Tools = tool.Static(tools)
	sid := newSession(t, svc, ws)
	m.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "mcp_tool_7", Arguments: `{}`}}},
		modeltest.Reply{Text: []string{"called"}},
		modeltest.Reply{Text: []string{"hi"}},
	)
	ask(t, svc, rec, sid, TextInput("call it"))
	reqs := m.Requests()
	if offersTool(reqs[0], "mcp_tool_7") || !offersTool(reqs[1], "mcp_tool_7") {
		t.Fatalf("the tool was not deferred, then found: %v %v", offersTool(reqs[0], "mcp_tool_7"), offersTool(reqs[1], "mcp_tool_7"))
	}
	if _, err := svc.Rollback(t.Context(), sid, 1, nil); err != nil {
		t.Fatal(err)
	}
	ask(t, svc, rec, sid, TextInput("hello"))
	reqs = m.Requests()
	if offersTool(reqs[len(reqs)-1], "mcp_tool_7") {
		t.Error("after rolling back the turn that found mcp_tool_7, it is still offered whole")
	}
}

// The attack: the model loads a skill whose allowed-tools leave write_file
// out; kin restarts (the editor was closed) and the person goes on. The
// model still reads the skill, and kin's word that calls of other tools are
// asked, but the restarted kin had no skill loaded: the write was applied
// unasked in auto-edit mode. A resumed session loads again what its
// conversation loaded (and, rolled back, what it no longer does not).
func TestALoadedSkillStillNarrowsAfterARestart(t *testing.T) {
	for _, rollback := range []bool{false, true} {
		home := t.TempDir()
		svc, m, rec, _, ws, sid := readOnlySkillSession(t, home, "read_file")
		m.Script(
			modeltest.Reply{Calls: []modeltest.Call{{ID: "s1", Name: SkillToolName, Arguments: `{"name":"read-only-review"}`}}},
			modeltest.Reply{Text: []string{"loaded"}},
		)
		ask(t, svc, rec, sid, TextInput("review it"))
		if rollback {
			if _, err := svc.Rollback(t.Context(), sid, 1, nil); err != nil {
				t.Fatal(err)
			}
		}
		svc.Shutdown()
		svc2, m2, rec2, a2, _ := limitService(t, home, settings.Limits{})
		m2.Script(
			modeltest.Reply{Calls: []modeltest.Call{{ID: "w1", Name: "write_file", Arguments: `{"path":"out.txt","content":"written\n"}`}}},
			modeltest.Reply{Text: []string{"wrote"}},
		)
		if _, err := svc2.Resume(sid, ResumeOptions{}); err != nil {
			t.Fatal(err)
		}
		ask(t, svc2, rec2, sid, TextInput("write out.txt"))
		_, err := os.Stat(filepath.Join(ws, "out.txt"))
		a2.mu.Lock()
		asked := len(a2.asked)
		a2.mu.Unlock()
		switch {
		case !rollback && (err == nil || asked != 1):
			t.Errorf("after a restart, the loaded skill's allowed-tools no longer narrowed: written=%v, asked %d time(s)", err == nil, asked)
		case rollback && (err != nil || asked != 0):
			t.Errorf("after a rollback and a restart, the rolled-back skill narrowed: written=%v, asked %d time(s)", err == nil, asked)
		}
	}
}

// The attack, with two kins on one session: kin B loads a skill whose
// allowed-tools leave write_file out, and lets the session go (its window
// closed the session); kin A takes it and rolls that turn back; kin B takes
// it again. B re-read the plan from the log but kept the skill it had
// loaded: its allowed-tools went on narrowing calls of a conversation that
// no longer holds it (a write in auto-edit mode was asked and refused).
func TestASkillAnotherKinRolledBackNoLongerNarrows(t *testing.T) {
	home := t.TempDir()
	b, mb, recB, askedB, ws, sid := readOnlySkillSession(t, home, "read_file")
	mb.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "s1", Name: SkillToolName, Arguments: `{"name":"read-only-review"}`}}},
		modeltest.Reply{Text: []string{"loaded"}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "w1", Name: "write_file", Arguments: `{"path":"out.txt","content":"written\n"}`}}},
		modeltest.Reply{Text: []string{"wrote"}},
	)
	ask(t, b, recB, sid, TextInput("review it"))
	b.Release(sid)
	a, _, _, _, _ := limitService(t, home, settings.Limits{})
	if _, err := a.Rollback(t.Context(), sid, 1, nil); err != nil {
		t.Fatal(err)
	}
	a.Release(sid)
	ask(t, b, recB, sid, TextInput("write out.txt"))
	if _, err := os.Stat(filepath.Join(ws, "out.txt")); err != nil {
		askedB.mu.Lock()
		t.Errorf("kin B still narrowed by the skill kin A rolled back (asked %d time(s))", len(askedB.asked))
		askedB.mu.Unlock()
	}
}
