package checkpoint_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/checkpoint"
)

// The person types in a file while a turn runs, between two of kin's
// edits of it (an editor open on the file the agent is working on): the
// second edit builds on their text. Undoing the turn must not put back
// the file as it was before the turn, which would throw their text away
// without a word: the file is left as it is and reported, with a file
// the turn changed alone still restored.
func TestUndoKeepsWhatThePersonWroteBetweenKinsEdits(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	a, b := filepath.Join(ws, "a.txt"), filepath.Join(ws, "b.txt")
	write(t, a, "a1\n")
	write(t, b, "b1\n")
	st := checkpoint.New(filepath.Join(home, "checkpoints"))
	before(t, st, "t_1", "call_1", a, "a1\nkin\n")
	write(t, a, "a1\nkin\nmine, typed meanwhile\n") // the person, mid-turn
	before(t, st, "t_1", "call_2", a, "a1\nkin\nmine, typed meanwhile\nkin again\n")
	before(t, st, "t_1", "call_3", b, "b2\n")

	u, err := st.Undo(ctx, "s_1", "", disk)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(read(t, a), "mine, typed meanwhile") {
		t.Fatalf("undo threw away what the person wrote during the turn: %q", read(t, a))
	}
	if len(u.Conflicts) != 1 || u.Conflicts[0].Path != a || !strings.Contains(u.Conflicts[0].Diff, "+mine, typed meanwhile") {
		t.Errorf("conflicts %+v", u.Conflicts)
	}
	if read(t, b) != "b1\n" || strings.Join(u.Restored, ",") != b {
		t.Errorf("b.txt %q, restored %v", read(t, b), u.Restored)
	}
}
