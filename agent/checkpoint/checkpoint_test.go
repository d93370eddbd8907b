package checkpoint_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/checkpoint"
	"github.com/kin-dev/kin/agent/files"
	"github.com/kin-dev/kin/agent/session"
)

var (
	ctx  = context.Background()
	disk = files.Disk{}
)

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o640); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// before records a change and makes it, as a tool does.
func before(t *testing.T, st *checkpoint.Store, turn, call, p, next string) {
	t.Helper()
	old, err := os.ReadFile(p)
	existed := err == nil
	if _, err := st.Before(checkpoint.Change{SessionID: "s_1", TurnID: turn, CallID: call, Path: p, Old: old, Existed: existed, New: []byte(next)}); err != nil {
		t.Fatal(err)
	}
	write(t, p, next)
}

func TestUndoRestoresEditsRemovesCreatedFilesAndKeepsOthersChanges(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	a, b, c, created := filepath.Join(ws, "a.txt"), filepath.Join(ws, "b.txt"), filepath.Join(ws, "c.txt"), filepath.Join(ws, "new.txt")
	write(t, a, "a1\n")
	write(t, b, "b1\n")
	write(t, c, "c1\n")
	st := checkpoint.New(filepath.Join(home, "checkpoints"))
	before(t, st, "t_1", "call_1", a, "a2\n")
	before(t, st, "t_1", "call_2", a, "a3\n") // a second edit of a: undo goes back to a1
	before(t, st, "t_1", "call_3", b, "b2\n")
	before(t, st, "t_1", "call_4", c, "c2\n")
	before(t, st, "t_1", "call_5", created, "fresh\n")
	if err := st.Untracked("s_1", "t_1", session.NotUndoable{CallID: "call_6", Name: "bash", Title: "Run make", Reason: "a command"}); err != nil {
		t.Fatal(err)
	}
	write(t, c, "c2\nmine\n") // the person edits c since

	// A new Store (kin restarted) undoes from what is on disk.
	u, err := checkpoint.New(filepath.Join(home, "checkpoints")).Undo(ctx, "s_1", "", disk)
	if err != nil {
		t.Fatal(err)
	}
	if u.TurnID != "t_1" || strings.Join(u.Restored, ",") != a+","+b+","+created {
		t.Errorf("undo = %+v", u)
	}
	if read(t, a) != "a1\n" || read(t, b) != "b1\n" || read(t, c) != "c2\nmine\n" {
		t.Errorf("files: %q %q %q", read(t, a), read(t, b), read(t, c))
	}
	if _, err := os.Stat(created); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the created file is still there: %v", err)
	}
	if fi, _ := os.Stat(a); fi.Mode().Perm() != 0o640 {
		t.Errorf("a.txt mode %v", fi.Mode().Perm())
	}
	if len(u.Conflicts) != 1 || u.Conflicts[0].Path != c || !strings.Contains(u.Conflicts[0].Diff, "+mine") {
		t.Errorf("conflicts = %+v", u.Conflicts)
	}
	if len(u.NotUndoable) != 1 || u.NotUndoable[0].CallID != "call_6" {
		t.Errorf("not undoable = %+v", u.NotUndoable)
	}
	if _, err := st.Undo(ctx, "s_1", "t_1", disk); !errors.Is(err, checkpoint.ErrUndone) {
		t.Errorf("second undo: %v", err)
	}
	if _, err := st.Undo(ctx, "s_1", "", disk); !errors.Is(err, checkpoint.ErrNothingToUndo) {
		t.Errorf("nothing left: %v", err)
	}
}

func TestUndoDefaultsToTheLatestTurnAndFilesArePrivate(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	p := filepath.Join(ws, "f")
	write(t, p, "0")
	st := checkpoint.New(filepath.Join(home, "checkpoints"))
	before(t, st, "t_1", "c1", p, "1")
	before(t, st, "t_2", "c2", p, "2")
	if err := st.Untracked("s_1", "t_3", session.NotUndoable{CallID: "c3", Name: "bash"}); err != nil {
		t.Fatal(err) // a turn that only ran a command changed no file kin knows of
	}
	if turns, _ := st.Turns("s_1"); strings.Join(turns, ",") != "t_1,t_2" {
		t.Errorf("turns %v", turns)
	}
	u, err := st.Undo(ctx, "s_1", "", disk)
	if err != nil || u.TurnID != "t_2" || read(t, p) != "1" {
		t.Fatalf("undo %+v %v: %q", u, err, read(t, p))
	}
	if _, err := st.Undo(ctx, "s_1", "t_3", disk); !errors.Is(err, checkpoint.ErrNoCheckpoint) {
		t.Errorf("a turn without file changes: %v", err)
	}
	if u, err := st.Undo(ctx, "s_1", "", disk); err != nil || u.TurnID != "t_1" || read(t, p) != "0" {
		t.Fatalf("undo %+v %v: %q", u, err, read(t, p))
	}
	err = filepath.Walk(filepath.Join(home, "checkpoints"), func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v", path, fi.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st.Prune(func(string) bool { return false })
	if _, err := os.Stat(filepath.Join(home, "checkpoints", "s_1")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pruned session's checkpoints remain: %v", err)
	}
}

// A write that was refused (a conflict) drops its checkpoint: undo never
// reports a change that did not happen.
func TestRevertedCheckpointIsForgotten(t *testing.T) {
	ws := t.TempDir()
	p := filepath.Join(ws, "f")
	write(t, p, "0")
	st := checkpoint.New(t.TempDir())
	revert, err := st.Before(checkpoint.Change{SessionID: "s_1", TurnID: "t_1", CallID: "c1", Path: p, Old: []byte("0"), Existed: true, New: []byte("1")})
	if err != nil {
		t.Fatal(err)
	}
	revert()
	if _, err := st.Undo(ctx, "s_1", "", disk); !errors.Is(err, checkpoint.ErrNothingToUndo) {
		t.Errorf("undo after a reverted write: %v", err)
	}
	before(t, st, "t_2", "c2", p, "2")
	revert, _ = st.Before(checkpoint.Change{SessionID: "s_1", TurnID: "t_2", CallID: "c3", Path: p, Old: []byte("2"), Existed: true, New: []byte("3")})
	revert() // the second write of the turn failed: the file is as the first left it
	if u, err := st.Undo(ctx, "s_1", "", disk); err != nil || len(u.Conflicts) != 0 || read(t, p) != "0" {
		t.Errorf("undo %+v %v: %q", u, err, read(t, p))
	}
}

func TestIDsCannotNameOtherFolders(t *testing.T) {
	st := checkpoint.New(t.TempDir())
	if _, err := st.Before(checkpoint.Change{SessionID: "../x", TurnID: "t_1", Path: "/tmp/x"}); err == nil {
		t.Error("a session id with .. was taken")
	}
	if _, err := st.Undo(ctx, "s_1", "../../t", disk); err == nil {
		t.Error("a turn id with .. was taken")
	}
}
