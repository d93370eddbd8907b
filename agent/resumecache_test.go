package agent

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/session"
)

// longLog writes a session of turns*5 records and returns its id.
func longLog(t testing.TB, home string, turns int) string {
	t.Helper()
	st := session.NewStore(filepath.Join(home, "sessions"))
	info, log, err := st.Create("long", []string{"/w"}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Repeat("output line of a command\n", 40)
	for i := 0; i < turns; i++ {
		turn, call := fmt.Sprintf("t_%06d", i), fmt.Sprintf("call_%06d", i)
		log.Append(session.Record{Type: session.TypeUser, TurnID: turn, Text: "please run the tests"})
		log.Append(session.Record{Type: session.TypeAssist, TurnID: turn, Text: "Running them now."})
		log.Append(session.Record{Type: session.TypeCall, TurnID: turn, CallID: call, Name: "bash", Kind: "execute", Arguments: `{"command":"go test ./..."}`})
		log.Append(session.Record{Type: session.TypeResult, TurnID: turn, CallID: call, Name: "bash", Status: "completed", Output: out})
		log.Append(session.Record{Type: session.TypeTurn, TurnID: turn, Status: "completed"})
	}
	log.Close()
	return info.SessionID
}

// TestResumeAgainReadsNothingUntilTheLogChanges: a second resume of the
// same page answers the same history; once something is appended, the
// next resume shows it.
func TestResumeAgainReadsNothingUntilTheLogChanges(t *testing.T) {
	home := t.TempDir()
	id := longLog(t, home, 50)
	svc := New(Options{Home: home})
	defer svc.Shutdown()
	first, err := svc.Resume(id, ResumeOptions{Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	again, err := svc.Resume(id, ResumeOptions{Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(first.History, again.History) || first.Cursor != again.Cursor {
		t.Fatalf("the second resume differs")
	}
	svc.RecordElicitation(id, "el_1", "everything", "form", "Your name?", "decline", "person")
	after, err := svc.Resume(id, ResumeOptions{Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	last := after.History[len(after.History)-1]
	if last.Type != "elicitation" || last.RequestID != "el_1" {
		t.Fatalf("after an append the newest item is %+v", last)
	}
	older, err := svc.Resume(id, ResumeOptions{Limit: 20, Before: after.Cursor})
	if err != nil || len(older.History) != 20 {
		t.Fatalf("older page: %d items, %v", len(older.History), err)
	}
}

// BenchmarkResumeAgain: the first resume of a 10,000-record session in a
// kin (taking ownership, one pass over the log) against the second of the
// same page in the same kin. Target: the second under a tenth of the
// first (again/first).
func BenchmarkResumeAgain(b *testing.B) {
	home := b.TempDir()
	id := longLog(b, home, 2000)
	var first, again []time.Duration
	for b.Loop() {
		svc := New(Options{Home: home})
		at := time.Now()
		if _, err := svc.Resume(id, ResumeOptions{}); err != nil {
			b.Fatal(err)
		}
		first = append(first, time.Since(at))
		at = time.Now()
		if _, err := svc.Resume(id, ResumeOptions{}); err != nil {
			b.Fatal(err)
		}
		again = append(again, time.Since(at))
		svc.Shutdown()
	}
	med := func(d []time.Duration) float64 {
		s := append([]time.Duration(nil), d...)
		for i := range s {
			for j := i + 1; j < len(s); j++ {
				if s[j] < s[i] {
					s[i], s[j] = s[j], s[i]
				}
			}
		}
		return float64(s[len(s)/2]) / float64(time.Millisecond)
	}
	b.ReportMetric(med(first), "first-ms")
	b.ReportMetric(med(again), "again-ms")
	b.ReportMetric(med(again)/med(first), "again/first")
}
