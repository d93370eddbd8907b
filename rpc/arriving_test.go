package rpc_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/mcp/mcptest"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// gatedHTTP serves an MCP server whose requests wait while the gate is
// shut: a server still connecting for as long as the test likes.
type gatedHTTP struct {
	mu   sync.Mutex
	open chan struct{}
}

func (g *gatedHTTP) shut() {
	g.mu.Lock()
	g.open = make(chan struct{})
	g.mu.Unlock()
}

func (g *gatedHTTP) let() {
	g.mu.Lock()
	close(g.open)
	g.mu.Unlock()
}

func (g *gatedHTTP) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		open := g.open
		g.mu.Unlock()
		if open != nil {
			select {
			case <-open:
			case <-r.Context().Done():
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// A question asked while a trusted server is still connecting (right after
// the editor opened) waits for it, saying which server and for how long at
// most, and the first model request offers its tools. A server that waits
// for its launch approval is not waited for.
func TestTheFirstQuestionWaitsForServersStillConnecting(t *testing.T) {
	docs := mcptest.NewDocs()
	g := &gatedHTTP{}
	ts := mcptest.ServeHTTPHandler(t, g.wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return docs.Server }, nil)))
	w := newWorld(t, map[string]any{"docs": map[string]any{"type": "http", "url": ts.URL}})
	first := w.editor()
	respond(first, first.Wait("approval/request", rpctest.Field("kind", "server_launch")), "trust")
	first.Wait("mcp/status", rpctest.All(rpctest.Field("server", "docs"), rpctest.Field("state", "connected")))

	// kin starts again (the editor reopened), with docs trusted, slow to
	// answer, and a second server nobody trusted yet.
	g.shut()
	w.config(map[string]any{"docs": map[string]any{"type": "http", "url": ts.URL},
		"other": map[string]any{"type": "http", "url": mcptest.ServeHTTP(t, mcptest.NewDocs().Server)}})
	w.model.Script(modeltest.Reply{Text: []string{"hello"}})
	ed := w.editor()
	sid := newSession(t, ed)
	tid := start(t, ed, sid, "what do the docs say?")
	n := ed.Wait("notice", func(m map[string]any) bool { return strings.Contains(m["message"].(string), "to connect") })
	if msg := n["message"].(string); !strings.Contains(msg, "Waiting up to 10s for MCP server docs to connect") || strings.Contains(msg, "other") || n["sessionId"] != sid {
		t.Errorf("notice %v", n)
	}
	if len(w.model.Requests()) != 0 {
		t.Fatal("the model was asked before the server connected")
	}
	g.let()
	if done := completed(ed, tid); done["status"] != "completed" {
		t.Fatalf("turn %v", done)
	}
	reqs := w.model.Requests()
	if got := toolNames(reqs[0]); !got["mcp__docs__query-docs"] {
		t.Errorf("the first request offered %v", got)
	}
	ed.Wait("approval/request", rpctest.All(rpctest.Field("kind", "server_launch"), rpctest.Field("server", "other")))
}

// A server that failed to connect, or one waiting for its launch approval,
// is never waited for: the turn asks the model at once, with no notice.
func TestAQuestionDoesNotWaitForServersThatFailedOrWaitForApproval(t *testing.T) {
	w := newWorld(t, map[string]any{
		"gone":  map[string]any{"type": "http", "url": "http://127.0.0.1:1/mcp"},
		"other": map[string]any{"type": "http", "url": mcptest.ServeHTTP(t, mcptest.NewDocs().Server)}})
	ed := w.editor()
	respond(ed, ed.Wait("approval/request", rpctest.All(rpctest.Field("kind", "server_launch"), rpctest.Field("server", "gone"))), "allow_once")
	ed.Wait("mcp/status", rpctest.All(rpctest.Field("server", "gone"), rpctest.Field("state", "unavailable")))
	w.model.Script(modeltest.Reply{Text: []string{"hello"}})
	sid := newSession(t, ed)
	if done := completed(ed, start(t, ed, sid, "hi")); done["status"] != "completed" {
		t.Fatalf("turn %v", done)
	}
	for _, n := range ed.Notes("notice") {
		if strings.Contains(n["message"].(string), "to connect") {
			t.Errorf("waited: %v", n)
		}
	}
}
