package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// An editor closing sends its last request and shutdown together (the
// person deletes a session and quits). The delete arrived first, but was
// answered "the server is shut down" and never ran when its goroutine had
// not started before shutdown came: the session stayed. PROTOCOL.md:
// requests sent after shutdown get -32600; this one was sent before.
func TestBinaryARequestSentJustBeforeShutdownIsDone(t *testing.T) {
	for range 5 {
		p := startServe(t)
		p.send(req(1, "initialize", map[string]any{}))
		p.until(idIs(1))
		p.send(req(2, "session/new", nil))
		sid := p.until(idIs(2))["result"].(map[string]any)["session"].(map[string]any)["sessionId"].(string)
		frame := func(v any) string {
			b, _ := json.Marshal(v)
			return "Content-Length: " + strconv.Itoa(len(b)) + "\r\n\r\n" + string(b)
		}
		p.sendRaw(frame(req(3, "session/delete", map[string]any{"sessionId": sid})) + frame(req(4, "shutdown", nil)))
		var del map[string]any
		p.until(func(m map[string]any) bool {
			if m["id"] == float64(3) {
				del = m
			}
			return m["id"] == float64(4) // shutdown answers once the others are done
		})
		if del == nil || del["error"] != nil {
			t.Fatalf("session/delete sent before shutdown: %v", del)
		}
		p.send(map[string]any{"jsonrpc": "2.0", "method": "exit"})
		if code := p.wait(); code != 0 {
			t.Fatalf("exit code %d", code)
		}
		if _, err := os.Stat(filepath.Join(p.home, "sessions", sid+".jsonl")); !os.IsNotExist(err) {
			t.Fatalf("the session deleted before shutdown is still there (%v)", err)
		}
	}
}

// Over real stdio: a request kin refused as unreadable (an id that is
// true) must not run when the next message is a response; on main the
// session/delete it carried ran as id 0 and the session was gone.
func TestBinaryARefusedRequestNeverRuns(t *testing.T) {
	p := startServe(t)
	p.send(req(1, "initialize", map[string]any{}))
	p.until(idIs(1))
	p.send(req(2, "session/new", nil))
	sid := p.until(idIs(2))["result"].(map[string]any)["session"].(map[string]any)["sessionId"].(string)
	bad := `{"jsonrpc":"2.0","id":true,"method":"session/delete","params":{"sessionId":"` + sid + `"}}`
	stray := `{"jsonrpc":"2.0","id":77,"result":{"applied":true}}`
	p.sendRaw("Content-Length: " + strconv.Itoa(len(bad)) + "\r\n\r\n" + bad + "Content-Length: " + strconv.Itoa(len(stray)) + "\r\n\r\n" + stray)
	p.send(req(4, "session/list", nil))
	for {
		m := p.next()
		if m["id"] == float64(0) {
			t.Fatalf("the refused request ran as id 0: %v", m)
		}
		if m["id"] == float64(4) {
			break
		}
	}
	if _, err := os.Stat(filepath.Join(p.home, "sessions", sid+".jsonl")); err != nil {
		t.Fatalf("a refused session/delete ran: %v", err)
	}
}
