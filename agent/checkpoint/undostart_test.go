package checkpoint_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/kin-dev/kin/agent/checkpoint"
)

// UndoWith: Start runs with the picked turn before any file is touched,
// and its error stops the undo with nothing touched; a turn the session
// log says was left unfinished is undone again (by its id, or as the
// latest) although its checkpoint says undone, a file already put back
// counting as restored.
func TestUndoWithStartsFirstAndFinishesAnUnfinishedUndo(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	p, q := filepath.Join(ws, "p"), filepath.Join(ws, "q")
	write(t, p, "p0")
	write(t, q, "q0")
	st := checkpoint.New(filepath.Join(home, "checkpoints"))
	before(t, st, "t_1", "c1", p, "p1")
	before(t, st, "t_2", "c2", p, "p2")
	before(t, st, "t_2", "c3", q, "q2")

	refused := errors.New("the log is full")
	var started []string
	_, err := st.UndoWith(ctx, "s_1", "", disk, checkpoint.Undoing{Start: func(turn string) error {
		started = append(started, turn)
		return refused
	}})
	if !errors.Is(err, refused) || len(started) != 1 || started[0] != "t_2" || read(t, p) != "p2" || read(t, q) != "q2" {
		t.Fatalf("a refused start: %v, started %v, files %q %q", err, started, read(t, p), read(t, q))
	}

	// t_2's undo puts q back, then kin is stopped (here: the undo
	// finishes, and the log never hears of it).
	write(t, q, "q0")
	if _, err := st.Undo(ctx, "s_1", "t_2", disk); err != nil {
		t.Fatal(err)
	}
	write(t, p, "p2") // as though p was not put back yet
	unfinished := func(turn string) bool { return turn == "t_2" }
	for _, turn := range []string{"", "t_2"} {
		u, err := st.UndoWith(ctx, "s_1", turn, disk, checkpoint.Undoing{Unfinished: unfinished, Start: func(string) error { return nil }})
		if err != nil || u.TurnID != "t_2" || len(u.Restored) != 2 || len(u.Conflicts) != 0 || read(t, p) != "p1" || read(t, q) != "q0" {
			t.Fatalf("undo %q of the unfinished t_2: %+v, %v; files %q %q", turn, u, err, read(t, p), read(t, q))
		}
	}
	if _, err := st.Undo(ctx, "s_1", "t_2", disk); !errors.Is(err, checkpoint.ErrUndone) {
		t.Errorf("t_2 once the log has its outcome: %v", err)
	}
	if u, err := st.Undo(ctx, "s_1", "", disk); err != nil || u.TurnID != "t_1" {
		t.Errorf("the latest after t_2: %+v, %v", u, err)
	}
}
