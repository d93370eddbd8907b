package rpc

import (
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// A relayed log line carries its message and fields, with secrets masked
// as in the trace.
func TestLogMessageMasksSecrets(t *testing.T) {
	m := logMessage(zapcore.Entry{Level: zapcore.WarnLevel, Message: "mcp server failed"}, []zapcore.Field{
		zap.String("server", "docs"), zap.String("token", "tok-canary"),
		zap.Any("headers", map[string]string{"X-Tenant": "tenant-canary"}), zap.String("api_key", "key-canary"),
	})
	if m.Level != "warning" || !strings.HasPrefix(m.Message, "mcp server failed {") || !strings.Contains(m.Message, `"server":"docs"`) {
		t.Errorf("message %+v", m)
	}
	for _, canary := range []string{"tok-canary", "tenant-canary", "key-canary"} {
		if strings.Contains(m.Message, canary) {
			t.Errorf("secret %s in %q", canary, m.Message)
		}
	}
	if m := logMessage(zapcore.Entry{Level: zapcore.ErrorLevel, Message: "x"}, nil); m.Level != "error" || m.Message != "x" {
		t.Errorf("%+v", m)
	}
}
