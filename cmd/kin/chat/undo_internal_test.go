package chat

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kin-dev/kin/rpc"
)

// An undo kin was stopped in (a history item with error) says it is
// unfinished, and why, not that it restored nothing.
func TestAnUnfinishedUndoSaysSo(t *testing.T) {
	var out bytes.Buffer
	u := &ui{scr: newScreen(&out, false), session: "s_1"}
	u.showUndo(rpc.TurnUndoResult{TurnID: "t_1", Restored: []string{}, Error: "kin stopped before this undo finished"})
	got := out.String()
	if !strings.Contains(got, "[undo] turn t_1: unfinished\n  kin stopped before this undo finished") || strings.Contains(got, "0 file(s) restored") {
		t.Errorf("an unfinished undo shows:\n%s", got)
	}
	out.Reset()
	u.showUndo(rpc.TurnUndoResult{TurnID: "t_1", Restored: []string{"/a.go"}})
	if got := out.String(); !strings.Contains(got, "[undo] turn t_1: 1 file(s) restored") {
		t.Errorf("a finished undo shows:\n%s", got)
	}
}
