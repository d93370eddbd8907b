package rpc

import (
	"encoding/json"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// relayLogs returns log with the connection's own warning and error lines
// also sent to the editor as log/message once the connection is
// initialized, so a person sees why something went wrong without opening
// kin's log file. What is sent is the line's
// message and fields, with the values of secret-looking fields, headers
// and env masked as in the trace.
func relayLogs(log *zap.Logger, s *Server) *zap.Logger {
	return log.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return zapcore.NewTee(c, &relayCore{s: s})
	}))
}

// relayCore is a zapcore.Core that notifies log/message. It must never log
// itself: notify's own failures are debug lines, which it does not relay.
type relayCore struct {
	s      *Server
	fields []zapcore.Field
}

func (c *relayCore) Enabled(l zapcore.Level) bool { return l >= zapcore.WarnLevel && c.s.relay.Load() }

func (c *relayCore) With(fs []zapcore.Field) zapcore.Core {
	return &relayCore{s: c.s, fields: append(append([]zapcore.Field(nil), c.fields...), fs...)}
}

func (c *relayCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

// Write queues the line for the relay goroutine: a log line may be written
// on the read loop, under a lock, or inside a failed write to the editor,
// where sending would block or deadlock. A full queue drops the line (it
// is in kin's own log all the same).
func (c *relayCore) Write(e zapcore.Entry, fs []zapcore.Field) error {
	select {
	case c.s.logs <- logMessage(e, append(append([]zapcore.Field(nil), c.fields...), fs...)):
	default:
	}
	return nil
}

// relayLogLines sends queued log lines until the connection's base context ends.
func (s *Server) relayLogLines() {
	for {
		select {
		case m := <-s.logs:
			s.notify(NotifyLogMessage, m)
		case <-s.disp.Base().Done():
			return
		}
	}
}

func (c *relayCore) Sync() error { return nil }

// logMessage renders one line: "<message> {fields}".
func logMessage(e zapcore.Entry, fs []zapcore.Field) LogMessage {
	level := "error"
	if e.Level == zapcore.WarnLevel {
		level = "warning"
	}
	var b strings.Builder
	b.WriteString(e.Message)
	if len(fs) > 0 {
		enc := zapcore.NewMapObjectEncoder()
		for _, f := range fs {
			f.AddTo(enc)
		}
		if doc, err := json.Marshal(enc.Fields); err == nil {
			b.WriteString(" ")
			b.Write(MaskSecrets(doc))
		}
	}
	return LogMessage{Level: level, Message: b.String()}
}
