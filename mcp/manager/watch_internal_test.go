package manager

import (
	"context"
	"testing"
	"time"

	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// onceHost allows every launch once.
type onceHost struct{ nopHost }

func (onceHost) ApproveLaunch(context.Context, LaunchRequest) (string, error) {
	return DecisionAllowOnce, nil
}

// watchedConns is how many connections the resource watch keeps entries
// for.
func watchedConns(m *Manager) (uris, told int) {
	m.watch.mu.Lock()
	defer m.watch.mu.Unlock()
	return len(m.watch.uris), len(m.watch.told)
}

// A kin that runs for days sees a server's connection end many times
// (mcp/apply of an edited entry, a lost connection, a server removed):
// the subscriptions and notices of an ended connection were kept for ever,
// keyed by its session, holding the session (and its connection) in
// memory. They go with the connection.
func TestAnEndedConnectionLeavesNoResourceWatch(t *testing.T) {
	n := mcptest.NewNotes()
	m := New(Options{Workdir: t.TempDir(), KinHome: t.TempDir(), Host: onceHost{},
		Fixed: []config.Server{{Name: "notes", Scope: config.ScopeGlobal, Transport: config.TransportHTTP, URL: mcptest.ServeHTTP(t, n.Server)}}})
	t.Cleanup(m.Close)
	ctx := context.Background()
	m.Start(ctx)
	s := m.servers["notes"]
	for i := range 3 {
		if _, ok := s.Session(); !ok {
			t.Fatalf("round %d: not connected: %+v", i, s.state)
		}
		if _, _, err := m.ReadForPerson(ctx, "notes", "notes://readme"); err != nil {
			t.Fatal(err)
		}
		if err := n.Touch(ctx, "notes://readme"); err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) { // a guard against a hang
			if _, told := watchedConns(m); told > 0 {
				break
			}
			if time.Now().After(end) {
				t.Fatal("the change was never told")
			}
		}
		s.stop(false)
		if uris, told := watchedConns(m); uris != 0 || told != 0 {
			t.Fatalf("round %d: after the connection ended the watch keeps %d subscription and %d notice entries", i, uris, told)
		}
		s.start(ctx)
	}
}
