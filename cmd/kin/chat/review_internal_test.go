package chat

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kin-dev/kin/rpc"
)

// Findings of a review turn show as a numbered list under one heading, the
// model's text cleaned of terminal controls; another session's are not
// shown.
func TestFindingsShowAsAList(t *testing.T) {
	var out bytes.Buffer
	u := &ui{scr: newScreen(&out, false), session: "s_1", o: Options{Cwd: "/src/app"}}
	send := func(f rpc.ReviewFinding) {
		b, _ := json.Marshal(f)
		u.handle(note{method: rpc.NotifyReviewFinding, params: b})
	}
	r := func(a, z int) rpc.Range { return rpc.Range{Start: rpc.Position{Line: a}, End: rpc.Position{Line: z}} }
	send(rpc.ReviewFinding{SessionID: "s_1", TurnID: "t_1", File: "/src/app/calc.go", Range: r(5, 6), Severity: "error", Title: "Sum skips\x1b[2J the first", Body: "range xs[1:]\ndrops xs[0]"})
	send(rpc.ReviewFinding{SessionID: "s_1", TurnID: "t_1", File: "/src/app/util/x.go", Range: r(0, 3), Severity: "info", Title: "Name"})
	send(rpc.ReviewFinding{SessionID: "s_2", TurnID: "t_9", File: "/elsewhere.go", Range: r(0, 1), Severity: "error", Title: "not ours"})
	got := out.String()
	for _, want := range []string{"[review findings]", "1. error calc.go:6  Sum skips", "     range xs[1:]\n     drops xs[0]", "2. info util/x.go:1-3  Name"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Count(got, "[review findings]") != 1 || strings.Contains(got, "not ours") || strings.Contains(got, "\x1b[2J") {
		t.Errorf("list:\n%q", got)
	}
}
