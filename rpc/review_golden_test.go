package rpc_test

import (
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/gitx/gitxtest"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
)

// reviewCalc is a repository's file with a planted bug once changed: Sum
// skips the first element (line 6 of the new version).
const reviewCalc = "package calc\n\n// Sum adds the numbers.\nfunc Sum(xs []int) int {\n\tt := 0\n\tfor _, x := range xs {\n\t\tt += x\n\t}\n\treturn t\n}\n"

// reviewFindingCall is the scripted model's report of the planted bug.
func reviewFindingCall(id string) modeltest.Call {
	return modeltest.Call{ID: id, Name: "report_finding",
		Arguments: `{"file":"calc.go","startLine":6,"endLine":6,"severity":"error","title":"Sum skips the first element","body":"range xs[1:] drops xs[0]; range over xs."}`}
}

// goldenReview records review/start (and its refusal of a folder with
// nothing to review), review/finding, and session/resume's findings.
func goldenReview(t *testing.T, g *recorder, z *normalizer) {
	e := newEnv(t)
	z.fixed = append(z.fixed, e.WS, "/home/ana/src/app", e.Home, "/home/ana/.kin")
	gitxtest.Repo(t, e.WS, map[string]string{"calc.go": reviewCalc})
	e.Model.Route(modeltest.FirstUser("Review the uncommitted changes"),
		modeltest.Reply{Calls: []modeltest.Call{reviewFindingCall("call_r1")}, Usage: modeltest.Usage{Input: 1400, Output: 60}},
		modeltest.Reply{Text: []string{"One finding: Sum skips the first element."}, Usage: modeltest.Usage{Input: 1500, Output: 12}})
	ed := e.connect()
	var s rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{Title: "review"}, &s)
	sid := s.Session.SessionID
	if err := ed.Call("review/start", rpc.ReviewStartParams{SessionID: sid, Target: rpc.ReviewTarget{Uncommitted: true}}, nil); err == nil {
		t.Fatal("review/start of a clean tree was not refused")
	}
	gitxtest.Write(t, e.WS, "calc.go", strings.Replace(reviewCalc, "range xs", "range xs[1:]", 1))
	var res rpc.ReviewStartResult
	ed.MustCall("review/start", rpc.ReviewStartParams{SessionID: sid, Target: rpc.ReviewTarget{Uncommitted: true}}, &res)
	completed(ed, res.TurnID)
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, nil)
	z.pin(0, sid, "s_20261130T231900_7d1e2a")
	z.pin(1, res.TurnID, "t_00000201")
	g.addWire(ed.Wire(), func(method string, m map[string]any) bool {
		p, _ := m["params"].(map[string]any)
		switch method {
		case "review/start", "review/finding":
			return true
		case "session/resume":
			return p != nil
		}
		return false
	})
}
