package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
	kinsession "github.com/kin-dev/kin/agent/session"
)

// The attack: a session rolled back through kin's own protocol (or the
// terminal), then loaded in an ACP editor. The replay showed the
// rolled-back turns as the conversation and nothing of the rollback, even
// one kin was stopped in, whose files may be only partly put back: the
// person was never told. A load replays a rollback as a message saying
// what it did, as it does an undo.
func TestALoadReplaysARollbackUnfinishedOrNot(t *testing.T) {
	for _, finished := range []bool{false, true} {
		w := newWorld(t)
		c := w.connect(nil)
		c.initialize(nil)
		sid := c.newSession()
		w.model.Script(modeltest.Reply{Text: []string{"Hello."}})
		c.prompt(sid, text("greet me"))
		c.close()
		logPath := filepath.Join(w.home, "sessions", sid+".jsonl")
		b, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		var turn string
		for _, line := range strings.Split(string(b), "\n") {
			var r kinsession.Record
			if json.Unmarshal([]byte(line), &r) == nil && r.Type == kinsession.TypeTurn {
				turn = r.TurnID
			}
		}
		recs := []kinsession.Record{{Type: kinsession.TypeRollback, Status: kinsession.RollbackStarted, Time: time.Now().UTC(), Rollback: &kinsession.Rollback{Turns: []string{turn}}}}
		if finished {
			recs = append(recs, kinsession.Record{Type: kinsession.TypeRollback, Time: time.Now().UTC(), Rollback: &kinsession.Rollback{Turns: []string{turn},
				Undos: []kinsession.Undo{{TurnID: turn, Conflicts: []kinsession.UndoConflict{{Path: filepath.Join(w.ws, "a.txt"), Reason: "changed since"}}}}}})
		}
		f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			line, _ := json.Marshal(r)
			f.Write(append(line, '\n'))
		}
		f.Close()

		c2 := w.connect(nil)
		c2.initialize(nil)
		c2.call(MethodSessionLoad, LoadSessionRequest{SessionID: sid, Cwd: w.ws, MCPServers: []MCPServer{}}, nil)
		var said string
		for _, u := range c2.updates(UpdateAgentMessage) {
			if t, _ := u["content"].(map[string]any)["text"].(string); strings.Contains(t, "Took back") {
				said = t
			}
		}
		switch {
		case !finished && !strings.Contains(said, "kin stopped"):
			t.Errorf("a load says of a rollback kin was stopped in: %q", said)
		case finished && (strings.Contains(said, "kin stopped") || !strings.Contains(said, "a.txt")):
			t.Errorf("a load says of a finished rollback that left a.txt: %q", said)
		}
		c2.close()
	}
}
