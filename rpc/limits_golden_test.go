package rpc_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
)

// goldenLimits records the spend limits' frames: turn/usage and
// turn/completed with their cost, the limit approval (raised for the
// session), and usage/summary of a session and of the day.
func goldenLimits(t *testing.T, g *recorder, z *normalizer) {
	e := newEnv(t)
	z.fixed = append(z.fixed, e.WS, "/home/ana/src/app", e.Home, "/home/ana/.kin", time.Now().Format(time.DateOnly), "2026-11-30")
	settings := `{"limits":{"sessionTokens":3000,"dayTokens":1000000,"dayCost":20,"currency":"USD",` +
		`"prices":{"mock-1":{"input":1.25,"cachedInput":0.125,"output":10}}}}`
	if err := os.WriteFile(filepath.Join(e.Home, "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	e.Model.Script(
		modeltest.Reply{Text: []string{"The tests pass."}, Usage: modeltest.Usage{Input: 2500, Cached: 2000, Output: 100}},
		modeltest.Reply{Text: []string{"Done."}, Usage: modeltest.Usage{Input: 2700, Cached: 2400, Output: 20}})
	ed := e.connect()
	var s rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{Title: "spend"}, &s)
	sid := s.Session.SessionID
	answerApprovals(ed, func(req map[string]any) string {
		if req["kind"] == rpc.KindLimit {
			return "allow_always"
		}
		return ""
	})
	t1 := start(t, ed, sid, "run the tests")
	completed(ed, t1)
	t2 := start(t, ed, sid, "and commit")
	if done := completed(ed, t2); done["status"] != "completed" {
		t.Fatalf("the second turn: %v", done)
	}
	ed.MustCall(rpc.MethodUsageSummary, rpc.UsageSummaryParams{Scope: "session", SessionID: sid}, nil)
	ed.MustCall(rpc.MethodUsageSummary, rpc.UsageSummaryParams{Scope: "day", SessionID: sid}, nil)
	if err := ed.Call(rpc.MethodUsageSummary, rpc.UsageSummaryParams{Scope: "week"}, nil); err == nil {
		t.Fatal("usage/summary of a week answered")
	}
	z.pin(0, sid, "s_20261130T231800_7d1e2a")
	z.pin(1, t1, "t_00000201")
	z.pin(1, t2, "t_00000202")
	wire := ed.Wire()
	for i := range wire {
		wire[i].Msg = questionID.ReplaceAll(wire[i].Msg, []byte(`"${1}_lim${2}"`))
	}
	z.pin(4, `"ap_lim1"`, `"ap_201"`)
	kept := map[string]bool{}
	g.addWire(wire, func(method string, m map[string]any) bool {
		p, _ := m["params"].(map[string]any)
		switch method {
		case rpc.MethodUsageSummary:
			return true
		case "approval/request", "approval/resolved":
			if p["kind"] == rpc.KindLimit || (method == "approval/resolved" && p["requestId"] == "ap_lim1") {
				return !kept[method] && setKept(kept, method)
			}
		case "approval/respond":
			return p["requestId"] == "ap_lim1"
		case "turn/usage":
			return p["currency"] != nil && !kept[method] && setKept(kept, method)
		case "turn/completed":
			u, _ := p["usage"].(map[string]any)
			return u["currency"] != nil && !kept[method] && setKept(kept, method)
		}
		return false
	})
}

func setKept(kept map[string]bool, key string) bool {
	kept[key] = true
	return true
}
