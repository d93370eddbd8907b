package rpc_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// A project skill the person trusted, then changed in the repository (a
// pull, a teammate's commit), is asked about again, marked changed, and
// neither its new text nor its old one steers the model until the person
// trusts it again.
func TestAChangedProjectSkillIsAskedAboutAgain(t *testing.T) {
	e := newEnv(t)
	e.put(".agents/skills/release/SKILL.md", "---\nname: release\ndescription: TRUSTED-DESCRIPTION cuts a release\n---\nTag, then push.\n")
	ed := e.connect()
	answerApprovals(ed, func(req map[string]any) string {
		if req["kind"] == rpc.KindProjectTrust {
			return "trust"
		}
		return ""
	})
	sid := openSession(t, ed, rpc.SessionNewParams{}).Session.SessionID
	e.Model.Script(modeltest.Reply{Text: []string{"ok"}})
	completed(ed, start(t, ed, sid, "hi"))
	if got := e.Model.Requests(); !strings.Contains(got[len(got)-1].Instructions, "TRUSTED-DESCRIPTION") {
		t.Fatalf("the trusted skill did not reach the model:\n%s", got[len(got)-1].Instructions)
	}

	e.put(".agents/skills/release/SKILL.md", "---\nname: release\ndescription: CHANGED-DESCRIPTION always push --force\n---\nPush with --force.\n")
	ed2 := e.connect()
	answerApprovals(ed2, func(req map[string]any) string { return "deny" })
	sid2 := openSession(t, ed2, rpc.SessionNewParams{}).Session.SessionID
	before := len(e.Model.Requests())
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "use_skill", Arguments: `{"name":"release"}`}}},
		modeltest.Reply{Text: []string{"done"}},
	)
	completed(ed2, start(t, ed2, sid2, "release it"))
	again := ed2.Wait("approval/request", rpctest.Field("kind", rpc.KindProjectTrust))
	items, _ := again["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("asked about %v, want the changed skill alone", items)
	}
	it := items[0].(map[string]any)
	if it["kind"] != "skill" || it["name"] != "release" || it["changed"] != true {
		t.Fatalf("the changed skill is not asked about as changed: %v", it)
	}
	reqs := e.Model.Requests()[before:]
	for i, r := range reqs {
		for _, bad := range []string{"CHANGED-DESCRIPTION", "TRUSTED-DESCRIPTION", "--force"} {
			if strings.Contains(r.Instructions, bad) || strings.Contains(r.Text(), bad) {
				t.Errorf("request %d carries %q of a skill not trusted as it is now", i, bad)
			}
		}
	}
}

// /skills and /trust are session commands an editor sends as a question:
// /skills lists the project's skill with whether it is trusted; /trust
// lists what was trusted and /trust revoke ID forgets it, so the next
// session asks again.
func TestSkillsAndTrustCommands(t *testing.T) {
	e := newEnv(t)
	e.put(".agents/skills/release/SKILL.md", "---\nname: release\ndescription: Cuts a release.\n---\nTag, then push.\n")
	ed := e.connect()
	trusting := true
	answerApprovals(ed, func(req map[string]any) string {
		if req["kind"] == rpc.KindProjectTrust && trusting {
			return "trust"
		}
		return "deny"
	})
	sid := openSession(t, ed, rpc.SessionNewParams{}).Session.SessionID
	var res rpc.TurnStartResult
	ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "/skills"}, &res)
	if res.Command == nil || res.TurnID != "" || !strings.Contains(res.Command.Text, "/release (project:.agents/skills) [not trusted: kin asks first]: Cuts a release.") || !strings.Contains(fmt.Sprint(res.Command.Result), "trusted:false") {
		t.Fatalf("/skills before trust: %+v", res.Command)
	}
	e.Model.Script(modeltest.Reply{Text: []string{"ok"}})
	completed(ed, start(t, ed, sid, "hi"))
	ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "/skills"}, &res)
	if strings.Contains(res.Command.Text, "not trusted") || !strings.Contains(res.Command.Text, "/release (project:.agents/skills): Cuts a release.") {
		t.Fatalf("/skills after trust: %s", res.Command.Text)
	}
	ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "/trust"}, &res)
	var list rpc.TrustListResult
	ed.MustCall(rpc.MethodTrustList, nil, &list)
	var id string
	for _, en := range list.Entries {
		if en.Kind == "skill" && en.Name == "release" {
			id = en.ID
		}
	}
	if id == "" || !strings.Contains(res.Command.Text, id) || !strings.Contains(res.Command.Text, "skill release") {
		t.Fatalf("/trust: %s (ledger %+v)", res.Command.Text, list.Entries)
	}
	if code, _ := ed.CallErr("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "/trust everything"}); code != rpc.CodeInvalidParams {
		t.Errorf("/trust everything: code %d", code)
	}
	ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "/trust revoke " + id}, &res)
	if !strings.Contains(res.Command.Text, "Revoked "+id) {
		t.Fatalf("/trust revoke: %s", res.Command.Text)
	}

	// Revoked: a new session asks about the skill again.
	trusting = false
	ed2 := e.connect()
	answerApprovals(ed2, func(req map[string]any) string { return "deny" })
	sid2 := openSession(t, ed2, rpc.SessionNewParams{}).Session.SessionID
	e.Model.Script(modeltest.Reply{Text: []string{"ok"}})
	completed(ed2, start(t, ed2, sid2, "again"))
	again := ed2.Wait("approval/request", rpctest.Field("kind", rpc.KindProjectTrust))
	if items, _ := again["items"].([]any); len(items) != 1 || items[0].(map[string]any)["name"] != "release" {
		t.Fatalf("after the revoke: %v", again["items"])
	}
}
