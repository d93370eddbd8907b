package session_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/session"
)

// The fixtures are big; they are made once per process and removed by
// TestMain.
var (
	fixtureRoot string
	fixtureOnce = map[string]*sync.Once{"list": {}, "log": {}}
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureRoot != "" {
		os.RemoveAll(fixtureRoot)
	}
	os.Exit(code)
}

func fixture(b *testing.B, name string, make func(dir string)) string {
	b.Helper()
	if fixtureRoot == "" {
		fixtureRoot, _ = os.MkdirTemp("", "kin-session-bench-")
	}
	dir := filepath.Join(fixtureRoot, name)
	fixtureOnce[name].Do(func() {
		os.MkdirAll(dir, 0o700)
		make(dir)
	})
	return dir
}

// longSession writes a session of n records: turns of a question, an
// answer, a call, its result (1 KiB of output) and the turn's end.
func longSession(b *testing.B, n int) (dir, id string) {
	dir = fixture(b, "log", func(dir string) {
		st := session.NewStore(dir)
		_, log, err := st.Create("long", []string{"/w"}, "", "")
		if err != nil {
			b.Fatal(err)
		}
		out := strings.Repeat("output line of a command\n", 40)
		for i := 0; i < (n-1)/5; i++ {
			turn := fmt.Sprintf("t_%06d", i)
			call := fmt.Sprintf("call_%06d", i)
			log.Append(session.Record{Type: session.TypeUser, TurnID: turn, Text: "please run the tests and tell me what failed"})
			log.Append(session.Record{Type: session.TypeAssist, TurnID: turn, Text: "Running them now; I will look at the failures next."})
			log.Append(session.Record{Type: session.TypeCall, TurnID: turn, CallID: call, Name: "bash", Kind: "execute", Arguments: `{"command":"go test ./..."}`})
			log.Append(session.Record{Type: session.TypeResult, TurnID: turn, CallID: call, Name: "bash", Status: "completed", Output: out})
			log.Append(session.Record{Type: session.TypeTurn, TurnID: turn, Status: "completed", Usage: &session.Usage{InputTokens: 100, OutputTokens: 20}})
		}
		log.Close()
	})
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			id = strings.TrimSuffix(e.Name(), ".jsonl")
		}
	}
	return dir, id
}

// BenchmarkDecodeFile10k is the floor for resume: decoding every record of
// a 10,000-record log.
func BenchmarkDecodeFile10k(b *testing.B) {
	dir, id := longSession(b, 10000)
	p := filepath.Join(dir, id+".jsonl")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if recs, _, err := session.ReadRecords(p); err != nil || len(recs) < 9990 {
			b.Fatal(len(recs), err)
		}
	}
}

// BenchmarkResume10k is session/resume's work on a 10,000-record log: one
// pass over the log and the reply's encoding, for the default page and for
// the whole history. page-B is the size of the encoded page, retained-B
// what is left on the heap while the reply is held (the page).
func BenchmarkResume10k(b *testing.B) {
	dir, id := longSession(b, 10000)
	st := session.NewStore(dir)
	for _, limit := range []int{200, 10000} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			b.ReportAllocs()
			var reply []byte
			for i := 0; i < b.N; i++ {
				v, err := st.View(id, session.Query{Limit: limit})
				if err != nil {
					b.Fatal(err)
				}
				p := v.Page()
				if reply, err = json.Marshal(struct {
					Session session.Info          `json:"session"`
					History []session.HistoryItem `json:"history"`
					Cursor  string                `json:"cursor,omitempty"`
				}{v.Info, p.Items, p.Cursor}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(reply)), "page-B")
			b.StopTimer()
			b.ReportMetric(float64(retained(func() any {
				v, _ := st.View(id, session.Query{Limit: limit})
				p := v.Page()
				reply, _ := json.Marshal(p.Items)
				return []any{p, reply}
			}))/float64(len(reply)), "retained/page")
		})
	}
}

// retained is how much of the heap what f returns keeps, once garbage is
// collected.
func retained(f func() any) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := f()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	return after.HeapAlloc - before.HeapAlloc
}

// listFixture makes n sessions the way kin leaves them (a log per session
// and the index), without n syncs.
func listFixture(b *testing.B, n int) string {
	return fixture(b, "list", func(dir string) {
		now := time.Now().UTC()
		for i := 0; i < n; i++ {
			id := fmt.Sprintf("s_20260101T000000_%06d", i)
			t := now.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano)
			log := `{"type":"session","time":"` + t + `","sessionId":"` + id + `","title":"session ` + id + `","roots":["/home/ana/src/app"]}` + "\n" +
				`{"type":"user","time":"` + t + `","turnId":"t_1","text":"a question"}` + "\n" +
				`{"type":"turn","time":"` + t + `","turnId":"t_1","status":"completed"}` + "\n"
			os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(log), 0o600)
		}
		if list, err := session.NewStore(dir).List(); err != nil || len(list) != n { // builds the index
			b.Fatal(len(list), err)
		}
	})
}

// BenchmarkList10000 is session/list over 10,000 sessions: cold (a new
// process: the index is read) and warm (the index is already in memory).
func BenchmarkList10000(b *testing.B) {
	dir := listFixture(b, 10000)
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if list, err := session.NewStore(dir).List(); err != nil || len(list) != 10000 {
				b.Fatal(len(list), err)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		st := session.NewStore(dir)
		st.List()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if list, err := st.List(); err != nil || len(list) != 10000 {
				b.Fatal(len(list), err)
			}
		}
	})
}
