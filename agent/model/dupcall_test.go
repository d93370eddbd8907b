package model

import (
	"context"
	"testing"
)

// Attack: a service (or a proxy replaying its stream) delivers the same
// function call twice: the item's done event again, or another item with
// the same call id, name and arguments. It is one call, run once: before,
// kin ran it twice (a command the person allowed always, twice).
// Calls that differ in anything are the model's, each kept.
func TestACallDeliveredTwiceIsOneCall(t *testing.T) {
	done := func(item, call, args string) string {
		return `{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"` + item +
			`","call_id":"` + call + `","name":"bash","arguments":"` + args + `","status":"completed"}}`
	}
	const push = `{\"command\":\"git push\"}`
	cl := sseServer(t,
		done("fc_1", "call_1", push),
		done("fc_1", "call_1", push),                   // the same item again
		done("fc_2", "call_1", push),                   // another item, the same call
		done("fc_3", "call_2", push),                   // the same command, the model's second call
		done("fc_4", "call_1", `{\"command\":\"ls\"}`), // the same id, another call
		completed)
	resp, err := cl.Stream(context.Background(), Request{Input: []Item{{Role: "user", Text: "hi"}}}, Handlers{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range resp.Calls {
		got = append(got, c.CallID+" "+c.Arguments)
	}
	want := []string{`call_1 {"command":"git push"}`, `call_2 {"command":"git push"}`, `call_1 {"command":"ls"}`}
	if len(got) != len(want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("call %d: %q, want %q", i, got[i], want[i])
		}
	}
}
