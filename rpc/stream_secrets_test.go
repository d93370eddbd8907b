package rpc_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// An editor that counts Content-Length in characters rather than bytes (a
// JavaScript string's length) cuts every frame with non-ASCII text short:
// the end of the body is read as the start of the next frame's header line
// and dropped. That end is the last thing the editor wrote, such as the
// env of an mcp/add: the log may say how much was dropped, never what.
func TestDroppedBodyTailIsNotLogged(t *testing.T) {
	const secret = "ghp_n0tL0gg3dAnywh3re"
	e := newEnv(t)
	opts := e.Options()
	core, logs := observer.New(zap.DebugLevel)
	opts.Logger = zap.New(core)
	r := rpctest.StartRaw(t, opts)
	r.Send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{}})
	if f := r.Next(); f.Error != nil {
		t.Fatalf("initialize: %v", f.Error)
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "mcp/add", "params": map[string]any{
		"name": "日本語のサーバー", "server": map[string]any{"command": "gh-mcp", "env": map[string]any{"GITHUB_TOKEN": secret}}}})
	body := string(b)
	r.Write(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", utf8.RuneCountInString(body), body))
	r.Write(rpctest.Framed(listReq(6)))
	expect(t, r, map[string]int64{"5": rpc.CodeParseError, "6": 0})

	dropped := false
	for _, l := range logs.All() {
		line := l.Message
		for _, f := range l.Context {
			enc := zapcore.NewMapObjectEncoder()
			f.AddTo(enc)
			line += fmt.Sprint(enc.Fields)
		}
		dropped = dropped || strings.Contains(line, "dropped")
		if strings.Contains(line, "h3re") {
			t.Errorf("the log has the dropped bytes: %s", line)
		}
	}
	if !dropped {
		t.Error("no log line says bytes were dropped")
	}
}
