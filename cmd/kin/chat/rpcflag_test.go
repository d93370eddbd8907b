package chat_test

import (
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/cmd/kin/chat"
)

// --rpc prints every message as JSON on the terminal's standard error.
// JSON escapes C0 controls but not C1 ones (U+0080-U+009F, which xterm
// acts on: U+009B is CSI, U+009D OSC) nor DEL nor bidirectional
// overrides, and the model's words are in the messages: they are printed
// as \u escapes, the same JSON.
func TestRPCFlagEscapesControls(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(modeltest.Reply{Text: []string{"A\u009b2J\u009d52;c;ZXZpbA==\u009cB\u202eC\x7fD\U000E0041E"}})
	s := e.run(true, func(o *chat.Options) { o.RPC = true })
	s.out.waitFor(t, "You> ")
	s.send("hi")
	s.out.waitFor(t, "Assistant> A")
	s.err.waitFor(t, `A\u009b2J\u009d52;c;ZXZpbA==\u009cB\u202eC\u007fD\udb40\udc41E`)
	s.send("/quit")
	s.wait()
	for _, r := range []string{"\u009b", "\u009d", "\u202e", "\x7f"} {
		if strings.Contains(s.err.String(), r) {
			t.Errorf("--rpc printed %q as it is", r)
		}
	}
}
