package rpc_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/mcp/config"
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

// lockedBuffer is a bytes.Buffer safe for concurrent writers (the trace and
// the log are written from several goroutines).
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

// URLs in a trace are masked as mcp/list shows them: an mcp/add or
// mcp/update with a password in the URL, a key in its query or a token in
// a key=value fragment leaves none of them in the trace; a plain #anchor is
// no secret and stays (issue 23: people attach traces to bug reports).
func TestTraceMasksURLSecretsAsMCPListDoes(t *testing.T) {
	e := newEnv(t)
	var trace lockedBuffer
	opts := e.Options()
	opts.Trace = &trace
	ed := rpctest.Start(t, opts)
	ed.Initialize(e.WS)
	for _, method := range []string{"mcp/add", "mcp/update"} {
		_ = ed.Call(method, map[string]any{"scope": "project", "name": "x", "config": map[string]any{
			"type": "http", "url": "https://ana:pw-canary@mcp.example.com/mcp?api_key=key-canary&v=2#access_token=frag-canary"}}, nil)
	}
	_ = ed.Call("mcp/add", map[string]any{"scope": "project", "name": "y", "config": map[string]any{
		"type": "http", "url": "https://mcp.example.com/docs#tool-calls"}}, nil)
	got := trace.String()
	if !strings.Contains(got, "#tool-calls") {
		t.Error("the trace masked a URL fragment that is an anchor")
	}
	for _, secret := range []string{"pw-canary", "key-canary", "frag-canary", "ana:"} {
		if strings.Contains(got, secret) {
			t.Errorf("%s reached the trace", secret)
		}
	}
	want, _ := json.Marshal(config.MaskURL("https://ana:pw-canary@mcp.example.com/mcp?api_key=key-canary&v=2#access_token=frag-canary"))
	if !strings.Contains(got, string(want)) {
		t.Errorf("the trace does not show the URL as mcp/list would (%s):\n%s", want, got)
	}
}

func TestMaskSecretsMasksURLsInText(t *testing.T) {
	in := `{"params":{"error":"connect https://u:pw-1@h/mcp?token=tok-2: refused","uri":"file:///home/ana/app","note":"see https://example.com/docs"}}`
	out := string(rpc.MaskSecrets([]byte(in)))
	for _, secret := range []string{"pw-1", "tok-2"} {
		if strings.Contains(out, secret) {
			t.Errorf("%s survived: %s", secret, out)
		}
	}
	for _, keep := range []string{"file:///home/ana/app", "https://example.com/docs", "refused"} {
		if !strings.Contains(out, keep) {
			t.Errorf("masked %q: %s", keep, out)
		}
	}
}
