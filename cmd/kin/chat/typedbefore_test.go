package chat_test

import (
	"testing"
)

// Without the line editor (TERM=dumb: the terminal edits lines itself), a
// line typed before an approval was shown (a question for the turn, read
// while the approval's notification waited beside it) answered it: which
// of the two kin chat took first was up to Go's select. Here "y" is read
// while kin chat waits for the service, the approval arrives meanwhile,
// and both are there when it goes on; a line read before the approval was
// shown is taken as what it was typed as, never as the answer, and only
// Enter typed after it answers (and denies). Ten times: on main about
// half of them allowed the call.
func TestLineTypedBeforeAnApprovalIsNotItsAnswer(t *testing.T) {
	for range 10 {
		f, s := fakeChat(t)
		release := make(chan struct{})
		f.set("grants/list", func() any {
			<-release
			return map[string]any{"grants": []any{}}
		})
		s.send("/grants")
		f.waitCall("grants/list", 1)
		f.notify("approval/request", map[string]any{
			"requestId": "ap_1", "sessionId": "s_fake", "turnId": "t_1", "callId": "c_1",
			"kind": "tool_call", "tool": "bash", "toolKind": "execute", "title": "Run touch x", "command": "touch x",
			"options": options(),
		})
		s.send("y")
		close(release)
		s.out.waitFor(t, "Approve this operation?")
		s.send("")
		if got := f.waitCall("approval/respond", 1); got["decision"] != "deny" {
			t.Fatalf("the approval was answered %v", got["decision"])
		}
		s.send("/quit")
		s.wait()
	}
}
