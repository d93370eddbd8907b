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
