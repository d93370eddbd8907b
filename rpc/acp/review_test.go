package acp

import (
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/gitx/gitxtest"
	"github.com/kin-dev/kin/agent/modeltest"
)

// /review in an ACP client: the review turn runs as the prompt's (it ends
// end_turn), what is reviewed and each finding arrive as the agent's text,
// and a folder with nothing to review is a clear error.
func TestReviewCommandFindingsArriveAsText(t *testing.T) {
	w := newWorld(t)
	calc := "package calc\n\nfunc Sum(xs []int) int {\n\tt := 0\n\tfor _, x := range xs {\n\t\tt += x\n\t}\n\treturn t\n}\n"
	gitxtest.Repo(t, w.ws, map[string]string{"calc.go": calc})
	w.model.Route(modeltest.FirstUser("Review the uncommitted changes"),
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_f", Name: "report_finding",
			Arguments: `{"file":"calc.go","startLine":5,"endLine":5,"severity":"error","title":"Sum skips the first element","body":"range xs[1:] drops xs[0]."}`}}},
		modeltest.Reply{Text: []string{"One finding."}})
	c := w.connect(nil)
	c.initialize(nil)
	sid := c.newSession()
	if err := c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{text("/review")}}, nil); err == nil ||
		!strings.Contains(err.Error(), "no uncommitted changes") {
		t.Fatalf("/review of a clean tree: %v", err)
	}
	gitxtest.Write(t, w.ws, "calc.go", strings.Replace(calc, "range xs", "range xs[1:]", 1))
	res := c.prompt(sid, text("/review"))
	if res.StopReason != StopEndTurn {
		t.Fatalf("stop reason %q", res.StopReason)
	}
	var said strings.Builder
	for _, u := range c.updates(UpdateAgentMessage) {
		if ct, ok := u["content"].(map[string]any); ok {
			said.WriteString(ct["text"].(string))
		}
	}
	for _, want := range []string{"Review the uncommitted changes in " + w.ws, "Finding: error calc.go:5  Sum skips the first element", "range xs[1:] drops xs[0].", "One finding."} {
		if !strings.Contains(said.String(), want) {
			t.Errorf("missing %q in the agent's text:\n%s", want, said.String())
		}
	}
}
