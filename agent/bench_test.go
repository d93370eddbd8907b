package agent

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/session"
)

// BenchmarkResume10k is session/resume through the Service, as a new
// connection does it: taking the session's ownership, one pass over a
// 10,000-record log, and the reply's encoding (once, as jsonrpc2 does).
// Compare with session's BenchmarkDecodeFile10k.
func BenchmarkResume10k(b *testing.B) {
	home := b.TempDir()
	st := session.NewStore(filepath.Join(home, "sessions"))
	info, log, err := st.Create("long", []string{"/w"}, "", "")
	if err != nil {
		b.Fatal(err)
	}
	out := strings.Repeat("output line of a command\n", 40)
	for i := 0; i < 2000; i++ {
		turn, call := fmt.Sprintf("t_%06d", i), fmt.Sprintf("call_%06d", i)
		log.Append(session.Record{Type: session.TypeUser, TurnID: turn, Text: "please run the tests and tell me what failed"})
		log.Append(session.Record{Type: session.TypeAssist, TurnID: turn, Text: "Running them now; I will look at the failures next."})
		log.Append(session.Record{Type: session.TypeCall, TurnID: turn, CallID: call, Name: "bash", Kind: "execute", Arguments: `{"command":"go test ./..."}`})
		log.Append(session.Record{Type: session.TypeResult, TurnID: turn, CallID: call, Name: "bash", Status: "completed", Output: out})
		log.Append(session.Record{Type: session.TypeTurn, TurnID: turn, Status: "completed", Usage: &session.Usage{InputTokens: 100, OutputTokens: 20}})
	}
	log.Close()
	for _, limit := range []int{0, 10000} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				svc := New(Options{Home: home})
				r, err := svc.Resume(info.SessionID, ResumeOptions{Limit: limit})
				if err != nil || r.ReadOnly != nil {
					b.Fatal(err, r.ReadOnly)
				}
				if _, err := json.Marshal(r.History); err != nil {
					b.Fatal(err)
				}
				svc.Shutdown()
			}
		})
	}
}
