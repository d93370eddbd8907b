package main_test

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// acpProc is the built binary running `kin acp` over real pipes, with
// ACP's framing: one JSON message per line (its send and until stand for
// kin serve's).
type acpProc struct{ *proc }

func startACP(t testing.TB, env ...string) *acpProc {
	t.Helper()
	return &acpProc{startKin(t, "acp", env...)}
}

func (p *acpProc) send(v any) {
	p.t.Helper()
	b, _ := json.Marshal(v)
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		p.t.Fatal(err)
	}
}

// until reads lines until one matches; stdout must hold nothing but
// JSON-RPC 2.0 messages, one per line.
func (p *acpProc) until(match func(map[string]any) bool) map[string]any {
	p.t.Helper()
	for {
		line, err := p.out.ReadBytes('\n')
		if err != nil {
			p.t.Fatalf("reading stdout: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil || m["jsonrpc"] != "2.0" {
			p.t.Fatalf("stdout holds something that is not a JSON-RPC 2.0 message: %q", line)
		}
		if match(m) {
			return m
		}
	}
}

func isUpdate(kind string) func(map[string]any) bool {
	return func(m map[string]any) bool {
		if m["method"] != "session/update" {
			return false
		}
		u, _ := m["params"].(map[string]any)["update"].(map[string]any)
		return u["sessionUpdate"] == kind
	}
}

func TestBinaryACPTurnOverStdio(t *testing.T) {
	m := modeltest.New()
	defer m.Close()
	m.Script(modeltest.Reply{Text: []string{"hello ", "over ", "acp"}})
	p := startACP(t, "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+m.URL())
	p.send(req(1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}))
	if v := p.until(idIs(1))["result"].(map[string]any)["protocolVersion"]; v != 1.0 {
		t.Fatalf("protocolVersion %v", v)
	}
	// A bad line is answered -32700 and the connection goes on.
	if _, err := io.WriteString(p.stdin, "{not json\n"); err != nil {
		t.Fatal(err)
	}
	if e := p.until(func(m map[string]any) bool { return m["error"] != nil }); e["error"].(map[string]any)["code"] != -32700.0 {
		t.Fatalf("a bad line: %v", e)
	}
	p.send(req(2, "session/new", map[string]any{"cwd": p.dir, "mcpServers": []any{}}))
	sid := p.until(idIs(2))["result"].(map[string]any)["sessionId"]
	p.send(req(3, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}))
	var text strings.Builder
	done := p.until(func(m map[string]any) bool {
		if isUpdate("agent_message_chunk")(m) {
			text.WriteString(m["params"].(map[string]any)["update"].(map[string]any)["content"].(map[string]any)["text"].(string))
		}
		return m["id"] == 3.0
	})
	if done["result"].(map[string]any)["stopReason"] != "end_turn" || text.String() != "hello over acp" {
		t.Fatalf("prompt: %v %q", done, text.String())
	}
	p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("kin acp exited: %v", err)
	}
	// A client shows kin's stderr to the person (agent-shell as errors):
	// a turn that went well writes nothing there; the bad line is a
	// warning, and the only line.
	if lines := strings.Split(strings.TrimSpace(p.stderr.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], `"level":"warn"`) || !strings.Contains(lines[0], "bad line") {
		t.Errorf("stderr holds more than the bad line's warning:\n%s", p.stderr.String())
	}
}

// BenchmarkACPBesideServe measures what an ACP editor waits for beside
// what kin serve's editor waits for, alternating the two in every
// operation so a busy machine slows both alike: spawn to the initialize
// reply, and a question to its first streamed text (session/prompt to the
// first agent_message_chunk; turn/start to the first turn/delta). Medians,
// and the median of the per-operation differences (target: within 1 ms).
func BenchmarkACPBesideServe(b *testing.B) {
	m := modeltest.New()
	defer m.Close()
	var serveInit, acpInit, serveFirst, acpFirst, initDiff, firstDiff rpctest.Samples
	for b.Loop() {
		b.StopTimer()
		// kin serve
		m.Script(modeltest.Reply{Text: []string{"first", " second"}})
		t0 := time.Now()
		s := startServe(b, "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+m.URL())
		s.send(req(1, "initialize", map[string]any{}))
		s.until(idIs(1))
		si := time.Since(t0)
		s.send(req(2, "session/new", nil))
		sid := s.until(idIs(2))["result"].(map[string]any)["session"].(map[string]any)["sessionId"]
		t0 = time.Now()
		s.send(req(3, "turn/start", map[string]any{"sessionId": sid, "input": "hi"}))
		s.until(func(m map[string]any) bool { return m["method"] == "turn/delta" })
		sf := time.Since(t0)
		s.until(func(m map[string]any) bool { return m["method"] == "turn/completed" })
		s.stdin.Close()
		s.cmd.Wait()

		// kin acp
		m.Script(modeltest.Reply{Text: []string{"first", " second"}})
		t0 = time.Now()
		a := startACP(b, "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+m.URL())
		a.send(req(1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}))
		a.until(idIs(1))
		ai := time.Since(t0)
		a.send(req(2, "session/new", map[string]any{"cwd": a.dir, "mcpServers": []any{}}))
		asid := a.until(idIs(2))["result"].(map[string]any)["sessionId"]
		t0 = time.Now()
		a.send(req(3, "session/prompt", map[string]any{"sessionId": asid, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}))
		a.until(isUpdate("agent_message_chunk"))
		af := time.Since(t0)
		a.until(idIs(3))
		a.stdin.Close()
		a.cmd.Wait()
		b.StartTimer()

		serveInit.Add(si)
		acpInit.Add(ai)
		serveFirst.Add(sf)
		acpFirst.Add(af)
		initDiff.Add(ai - si)
		firstDiff.Add(af - sf)
	}
	serveInit.Report(b, "serve-ms/spawn-init")
	acpInit.Report(b, "acp-ms/spawn-init")
	initDiff.Report(b, "acp-minus-serve-ms/spawn-init")
	serveFirst.Report(b, "serve-ms/first-text")
	acpFirst.Report(b, "acp-ms/first-text")
	firstDiff.Report(b, "acp-minus-serve-ms/first-text")
}
