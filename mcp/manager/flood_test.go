package manager_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/mcp/manager"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// Attack: a server announces list_changed in a loop, each list with a new
// tool. Every fetch that finds a change is a notice in the person's editor
// (and a new tool set for the model): ~80 a second before this test was
// written. Fetches are RefreshGap apart; the list kin ends with is the
// server's last.
func TestListChangedFloodIsPaced(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "flood", Version: "1"}, nil)
	mcptest.AddTool(srv, "base", "x", false, okHandler)
	h := &host{}
	m, _ := setup(t, h, map[string]any{"flood": map[string]any{"type": "http", "url": mcptest.ServeHTTP(t, srv)}}, nil)
	m.Start(context.Background())
	if st := state(m, "flood"); st.State != manager.StateConnected {
		t.Fatalf("%+v", st)
	}
	const flood = 2 * time.Second
	last := ""
	for i, stop := 0, time.Now().Add(flood); time.Now().Before(stop); i++ {
		last = fmt.Sprint("t", i)
		mcptest.AddTool(srv, last, "x", false, okHandler)
		srv.RemoveTools(fmt.Sprint("t", i-1))
		time.Sleep(time.Millisecond)
	}
	eventually(t, "the last tool", func() bool { return toolNamed(m, "mcp__flood__"+last) != nil })
	h.mu.Lock()
	n := 0
	for _, s := range h.notices {
		if strings.Contains(s, "added tools") {
			n++
		}
	}
	h.mu.Unlock()
	if most := int(flood/manager.RefreshGap) + 2; n > most {
		t.Errorf("%d tool-change notices in %s (at most %d)", n, flood, most)
	}
	if len(names(m)) != 2 {
		t.Errorf("tools %v", names(m))
	}
}
