package rpc_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

func TestMaskSecrets(t *testing.T) {
	in := `{"params":{"config":{"command":"npx","env":{"TOKEN":"canary-1"},"headers":{"Authorization":"Bearer canary-2"}},"apiKey":"canary-3","nested":[{"client_secret":"canary-4"}],"input":"keep me"}}`
	out := string(rpc.MaskSecrets([]byte(in)))
	for _, c := range []string{"canary-1", "canary-2", "canary-3", "canary-4"} {
		if strings.Contains(out, c) {
			t.Errorf("%s survived: %s", c, out)
		}
	}
	if !strings.Contains(out, "keep me") || !strings.Contains(out, "npx") {
		t.Errorf("masked too much: %s", out)
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestTraceRecordsBothDirectionsWithoutSecrets(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(modeltest.Reply{Text: []string{"hi"}})
	var trace lockedBuffer
	opts := e.Options()
	opts.Trace = &trace
	ed := rpctest.Start(t, opts)
	ed.Initialize(e.WS)
	var s rpc.SessionResult
	ed.MustCall("session/new", nil, &s)
	completed(ed, start(t, ed, s.Session.SessionID, "hello"))
	// An editor that sends a secret in an MCP edit must not see it traced.
	_ = ed.Call("mcp/add", map[string]any{"scope": "project", "name": "x", "config": map[string]any{"url": "https://h/mcp", "headers": map[string]any{"Authorization": "Bearer trace-canary"}}}, nil)
	got := trace.String()
	for _, want := range []string{`"dir":"in"`, `"dir":"out"`, `"method":"turn/start"`, `"method":"turn/delta"`} {
		if !strings.Contains(got, want) {
			t.Errorf("trace lacks %s", want)
		}
	}
	if strings.Contains(got, "trace-canary") || strings.Contains(got, "sk-test-canary") {
		t.Error("a secret reached the trace")
	}
}
