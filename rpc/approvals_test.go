package rpc_test

import (
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// The permanent grant is kin's own option, allow_always_permanent, named
// for what it does; the first release's spelling (allow_always with
// permanent: true) still makes one, for one more release. A decision the
// request does not offer is -32602 and leaves it open.
func TestPermanentGrantIsAnOption(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer rpc.ApprovalRespondParams
		scope  string
	}{
		{"option", rpc.ApprovalRespondParams{Decision: "allow_always_permanent"}, "permanent"},
		{"first release", rpc.ApprovalRespondParams{Decision: "allow_always", Permanent: true}, "permanent"},
		{"session", rpc.ApprovalRespondParams{Decision: "allow_always"}, "session"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.Model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: `{"command":"echo hi"}`}}}, modeltest.Reply{Text: []string{"ok"}})
			ed, sid := e.editor()
			tid := start(t, ed, sid, "say hi")
			req := ed.Wait("approval/request", rpctest.Field("callId", "c1"))
			var names []string
			for _, o := range req["options"].([]any) {
				names = append(names, o.(map[string]any)["name"].(string))
			}
			want := []string{"Allow once", "Always allow `echo` commands in this session", "Always allow `echo` commands in every session", "Deny"}
			if len(names) != len(want) {
				t.Fatalf("options %v", names)
			}
			for i := range want {
				if names[i] != want[i] {
					t.Fatalf("options %v, want %v", names, want)
				}
			}
			id := req["requestId"].(string)
			if code, _ := ed.CallErr("approval/respond", rpc.ApprovalRespondParams{RequestID: id, Decision: "trust"}); code != rpc.CodeInvalidParams {
				t.Errorf("a decision not offered: code %d", code)
			}
			tc.answer.RequestID = id
			ed.MustCall("approval/respond", tc.answer, nil)
			completed(ed, tid)
			var grants rpc.GrantsListResult
			ed.MustCall("grants/list", nil, &grants)
			if len(grants.Grants) != 1 || grants.Grants[0].Scope != tc.scope || grants.Grants[0].Label != "Always allow `echo` commands" {
				t.Errorf("grants %+v", grants.Grants)
			}
		})
	}
}
