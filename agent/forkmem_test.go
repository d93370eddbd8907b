package agent

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/session"
)

// peakHeap runs fn and returns the most heap it held at once above what was
// in use before (sampled every millisecond).
func peakHeap(fn func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > base && m.HeapAlloc-base > peak.Load() {
				peak.Store(m.HeapAlloc - base)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	fn()
	close(stop)
	wg.Wait()
	return peak.Load()
}

// A fork of a long session (here 32 turns of 1 MB tool outputs) copies its
// log a record at a time: it never holds the original's history in memory.
func TestAForkOfALargeLogStreams(t *testing.T) {
	home := t.TempDir()
	st := session.NewStore(filepath.Join(home, "sessions"))
	info, log, err := st.Create("big", []string{t.TempDir()}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Repeat("x", 1<<20)
	const turns = 32
	for i := range turns {
		id := fmt.Sprintf("t%d", i)
		for _, r := range []session.Record{
			{Type: session.TypeUser, TurnID: id, Text: "read it"},
			{Type: session.TypeCall, TurnID: id, CallID: "c" + id, Name: "read_file", Arguments: "{}"},
			{Type: session.TypeResult, TurnID: id, CallID: "c" + id, Name: "read_file", Status: "completed", Output: out},
			{Type: session.TypeAssist, TurnID: id, Text: "ok"},
			{Type: session.TypeTurn, TurnID: id, Status: TurnCompleted},
		} {
			if _, _, err := log.Append(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	log.Close()
	out = ""
	svc := offlineService(t, home)
	var opened Opened
	peak := peakHeap(func() {
		if opened, err = svc.Fork(info.SessionID, "", nil); err != nil {
			t.Error(err)
		}
	})
	t.Logf("fork of a %d MB log: peak heap %.1f MB above the start", turns, float64(peak)/(1<<20))
	if peak > 32<<20 { // whole, the copy took about twice the log (61-66 MB); streamed, a record or two (9-16 MB)
		t.Errorf("a fork of a %d MB log held %.1f MB of heap at once; it should stream the copy", turns, float64(peak)/(1<<20))
	}
	recs, err := logRecords(svc.store, opened.Info.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	results := 0
	for _, r := range recs {
		if r.Type == session.TypeResult && len(r.Output) == 1<<20 {
			results++
		}
	}
	if results != turns {
		t.Errorf("the fork holds %d of the %d outputs whole", results, turns)
	}
}
