package session_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/session"
)

var leftOut = regexp.MustCompile(`\[kin: (\d+) more bytes were not recorded\]$`)

// cutCount is the count a cut text's marker gives, and the text it kept.
func cutCount(t *testing.T, s string) (kept string, n int) {
	t.Helper()
	m := leftOut.FindStringSubmatchIndex(s)
	if m == nil {
		t.Fatalf("no marker at the end of %q…", session.Prefix(s, 80))
	}
	n, _ = strconv.Atoi(s[m[2]:m[3]])
	return strings.TrimSuffix(s[:m[0]], "\n"), n
}

// A 17 MiB title is cut where the session is created and again where its
// record is written: the marker still says how much of the title is
// missing (it said "45 more bytes", the second cut's count, before), and
// the title with its marker fits the cap.
func TestACutTitleSaysHowManyBytesWereLeftOut(t *testing.T) {
	dir := t.TempDir()
	huge := strings.Repeat("é", 17<<19) // 17 MiB
	info, log, err := session.NewStore(dir).Create(huge, nil, "", "")
	if err != nil {
		t.Fatal(err)
	}
	log.Close()
	recs, _, err := session.ReadRecords(dir + "/" + info.SessionID + ".jsonl")
	if err != nil || len(recs) == 0 {
		t.Fatalf("read: %v %d", err, len(recs))
	}
	title := recs[0].Title
	if len(title) > session.MaxTitle {
		t.Errorf("title of %d bytes is over the %d-byte cap", len(title), session.MaxTitle)
	}
	kept, n := cutCount(t, title)
	if !strings.HasPrefix(huge, kept) || n != len(huge)-len(kept) {
		t.Errorf("kept %d bytes, marker says %d left out; %d were", len(kept), n, len(huge)-len(kept))
	}
}

// Cutting a cut text again, to the same or a smaller cap, counts what the
// first cut left out too; a text that fits is left alone.
func TestCutAddsUpAndFitsItsCap(t *testing.T) {
	s := strings.Repeat("a", 10_000)
	once := session.Cut(s, 1000)
	if len(once) > 1000 || session.Cut(once, 1000) != once {
		t.Fatalf("a cut text of %d bytes is cut again at its own cap", len(once))
	}
	twice := session.Cut(once, 300)
	kept, n := cutCount(t, twice)
	if len(twice) > 300 || n != len(s)-len(kept) {
		t.Errorf("cut twice: %d bytes, kept %d, says %d left out, want %d", len(twice), len(kept), n, len(s)-len(kept))
	}
	if got := session.Cut("short", 300); got != "short" {
		t.Errorf("a short text was changed: %q", got)
	}
}

// Attack: roll back turns that changed many files someone has reformatted
// since (a formatter over the repository): every file is a conflict with
// its diff (each up to the 64 KiB undo cuts it to). Rollback and undo
// records were not fitted, so the record passed MaxRecord, could not be
// written, and the rollback was reported failed after the files went back
// while the model still saw the turns. Such records are written, every
// conflict's path and reason kept, diffs cut or left out saying so.
func TestARollbackWithManyLargeConflictsIsRecorded(t *testing.T) {
	diff := strings.Repeat("-old line\n+new \"line\"\n", 3000) // about 64 KiB, more when encoded
	conflicts := func(turn string, n int) []session.UndoConflict {
		var out []session.UndoConflict
		for i := 0; i < n; i++ {
			out = append(out, session.UndoConflict{Path: "/w/" + turn + "/f" + strconv.Itoa(i) + ".go", Reason: "it was changed since kin changed it", Diff: diff})
		}
		return out
	}
	rb := session.Rollback{}
	for _, turn := range []string{"t4", "t3", "t2", "t1"} {
		rb.Turns = append(rb.Turns, turn)
		rb.Undos = append(rb.Undos, session.Undo{TurnID: turn, Restored: []string{}, Conflicts: conflicts(turn, 40)})
	}
	undo := session.Undo{TurnID: "t9", Restored: []string{}, Conflicts: conflicts("t9", 160)}
	dir := t.TempDir()
	info, log, err := session.NewStore(dir).Create("x", nil, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []session.Record{{Type: session.TypeRollback, Rollback: &rb}, {Type: session.TypeUndo, Undo: &undo}} {
		if _, n, err := log.Append(r); err != nil || n > session.MaxRecord {
			t.Fatalf("%s record: %d bytes, %v", r.Type, n, err)
		}
	}
	log.Close()
	recs, bad, err := session.ReadRecords(dir + "/" + info.SessionID + ".jsonl")
	if err != nil || bad != 0 || len(recs) != 3 {
		t.Fatalf("read back: %d records, %d bad, %v", len(recs), bad, err)
	}
	got := recs[1].Rollback
	if got == nil || len(got.Undos) != 4 || len(got.Turns) != 4 {
		t.Fatalf("rollback read back: %+v", got)
	}
	for _, u := range append(got.Undos, *recs[2].Undo) {
		if len(u.Conflicts) != 40 && len(u.Conflicts) != 160 {
			t.Fatalf("turn %s: %d conflicts", u.TurnID, len(u.Conflicts))
		}
		for _, c := range u.Conflicts {
			if c.Path == "" || !strings.HasPrefix(c.Reason, "it was changed since") {
				t.Fatalf("conflict %+v", c)
			}
			if c.Diff != diff && !strings.Contains(c.Diff, "not recorded") && !strings.Contains(c.Reason, "not recorded") {
				t.Fatalf("a diff was changed without saying so: %q", session.Prefix(c.Diff, 200))
			}
		}
	}
}
