package rpc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// idleEnv is a world whose settings.json sets a short model idle timeout.
func idleEnv(t *testing.T, seconds string) *env {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.Home, "settings.json"), []byte(`{"modelIdleTimeoutSeconds": `+seconds+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return e
}

// A model service that goes silent (before it answers, after its headers,
// mid-stream) ends the turn failed with a sentence saying so, the request
// is not sent again, and the session takes the next question.
func TestStalledModelServiceEndsTheTurnFailed(t *testing.T) {
	cases := []struct {
		name  string
		stall modeltest.Stall
		want  string
	}{
		{"before headers", modeltest.StallBeforeHeaders, "did not answer within 1 s"},
		{"after headers", modeltest.StallAfterHeaders, "accepted the request but then sent nothing for 1 s"},
		{"mid-stream", modeltest.StallMidStream, "sent nothing for 1 s mid-answer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := idleEnv(t, "1")
			e.Model.Script(modeltest.Reply{Text: []string{"partial ", "never"}, Stall: c.stall}, modeltest.Reply{Text: []string{"recovered"}})
			ed, sid := e.editor()
			tid := start(t, ed, sid, "hi")
			if c.stall == modeltest.StallMidStream {
				ed.Wait("turn/delta", rpctest.Field("turnId", tid))
			}
			done := completed(ed, tid)
			msg, _ := done["error"].(string)
			if done["status"] != "failed" || !strings.Contains(msg, c.want) || !strings.Contains(msg, "modelIdleTimeoutSeconds") {
				t.Fatalf("turn ended %v %q, want failed saying %q", done["status"], msg, c.want)
			}
			if n := len(e.Model.Requests()); n != 1 {
				t.Errorf("model saw %d requests; a stalled request must not be retried", n)
			}
			t2 := start(t, ed, sid, "again")
			if done := completed(ed, t2); done["status"] != "completed" || ed.Text(t2) != "recovered" {
				t.Errorf("next turn: %v %q", done, ed.Text(t2))
			}
		})
	}
}

// The timeout is for silence, not for the whole answer: a stream that
// keeps coming, slowly, for longer than the timeout completes.
func TestSlowButSteadyModelServiceCompletes(t *testing.T) {
	e := idleEnv(t, "2")
	deltas := modeltest.SplitText(strings.Repeat("steady ", 40), 40)
	e.Model.Script(modeltest.Reply{Text: deltas, Delay: 75 * time.Millisecond}) // about 3.5 s in all
	ed, sid := e.editor()
	tid := start(t, ed, sid, "take your time")
	if done := completed(ed, tid); done["status"] != "completed" || ed.Text(tid) != strings.Repeat("steady ", 40) {
		t.Fatalf("turn: %v", done)
	}
}

func TestBadIdleTimeoutSettingIsAClearError(t *testing.T) {
	e := idleEnv(t, "-5")
	ed := rpctest.Start(t, e.Options())
	res := ed.Initialize(e.WS)
	if res.Model.Configured || !strings.Contains(res.Model.Missing, "modelIdleTimeoutSeconds must be a positive number") {
		t.Errorf("initialize model info: %+v", res.Model)
	}
}
