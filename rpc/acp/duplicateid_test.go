package acp

import (
	"testing"

	"github.com/kin-dev/kin/rpc"
)

// A request reusing the id of a prompt still running is refused (-32600,
// under that id), and the prompt keeps its id: a $/cancel_request for it
// stops the prompt, which answers cancelled. Aliased ids (-5) alike.
func TestADuplicateIDInFlightIsRefusedAndThePromptKeepsIt(t *testing.T) {
	for _, id := range []string{`5`, `-5`, `"p"`} {
		t.Run(id, func(t *testing.T) {
			w := newWorld(t)
			c, sid := w.promptRunning(id)
			for _, dup := range []string{
				`{"jsonrpc":"2.0","id":` + id + `,"method":"session/list","params":{}}`,
				`{"jsonrpc":"2.0","id":` + id + `,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"again"}]}}`,
				`{"jsonrpc":"2.0","id":` + id + `,"method":"session/set_mode","params":{"sessionId":"` + sid + `","modeId":"default"}}`,
			} {
				c.send(dup)
				a := c.answer(id)
				if e, _ := a["error"].(map[string]any); e == nil || e["code"] != float64(rpc.CodeInvalidRequest) {
					t.Fatalf("a request reusing the running prompt's id %s: %v, want -32600", id, a)
				}
			}
			c.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":` + id + `}}`)
			a := c.answer(id)
			if r, _ := a["result"].(map[string]any); r == nil || r["stopReason"] != StopCancelled {
				t.Fatalf("the prompt answered %v, want stopReason cancelled", a)
			}
			if n := len(w.model.Requests()); n != 1 {
				t.Errorf("%d model requests, want 1 (the refused prompt must not run)", n)
			}
		})
	}
}
