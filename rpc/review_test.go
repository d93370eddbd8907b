package rpc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/gitx/gitxtest"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// A review turn is in ask mode whatever the session's: in an auto-edit
// session, a write the model forces is refused and the file is untouched;
// the finding it reports still arrives before turn/completed.
func TestReviewIsAskModeInAnAutoEditSession(t *testing.T) {
	e := newEnv(t)
	gitxtest.Repo(t, e.WS, map[string]string{"calc.go": reviewCalc})
	changed := strings.Replace(reviewCalc, "range xs", "range xs[1:]", 1)
	gitxtest.Write(t, e.WS, "calc.go", changed)
	e.Model.Route(modeltest.FirstUser("Review the uncommitted changes"),
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_w", Name: "write_file", Arguments: `{"path":"calc.go","content":"fixed\n"}`}}},
		modeltest.Reply{Calls: []modeltest.Call{reviewFindingCall("call_f")}},
		modeltest.Reply{Text: []string{"Done."}})
	ed := e.connect()
	var s rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{Mode: "auto-edit"}, &s)
	var res rpc.ReviewStartResult
	ed.MustCall("review/start", rpc.ReviewStartParams{SessionID: s.Session.SessionID, Target: rpc.ReviewTarget{Uncommitted: true}}, &res)
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_w"), rpctest.Field("status", "denied")))
	ed.Wait("review/finding", rpctest.Field("turnId", res.TurnID))
	if done := completed(ed, res.TurnID); done["status"] != "completed" {
		t.Fatalf("turn %v", done)
	}
	if b, _ := os.ReadFile(filepath.Join(e.WS, "calc.go")); string(b) != changed {
		t.Fatalf("a review changed calc.go: %q", b)
	}
	// The session's own mode is untouched.
	var r rpc.SessionResumeResult
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: s.Session.SessionID}, &r)
	if r.Session.Mode != "auto-edit" || len(r.Findings) != 1 {
		t.Fatalf("mode %q, findings %v", r.Session.Mode, r.Findings)
	}
	// Not a repository: a clear error, no turn.
	e2 := newEnv(t)
	ed2 := e2.connect()
	code, msg := ed2.CallErr("review/start", rpc.ReviewStartParams{Target: rpc.ReviewTarget{Uncommitted: true}})
	if code != rpc.CodeInvalidParams || !strings.Contains(msg, "not a git repository") {
		t.Fatalf("outside a repository: %d %s", code, msg)
	}
}
