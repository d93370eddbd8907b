package connect

import (
	"context"
	"log/slog"
	"sync"

	"github.com/kin-dev/kin/agent/visible"
)

// Tools whose x-mcp-header annotations are invalid (2026-07-28, SEP-2243:
// a header on a non-primitive, a name that is not an HTTP token, the same
// header twice) are dropped from tools/list by go-sdk, which only logs it.
// The person should know why a tool the server lists is missing, so the
// SDK's own judgement is taken from its log (the rules stay the SDK's, kin
// keeps no copy of them) and handed to Options.ToolDropped, once per tool
// and reason for the connection.

// sdkDropMessage is what go-sdk logs when it excludes a tool.
const sdkDropMessage = "excluding tool from tools/list"

// dropWatch is the client's slog handler: records of dropped tools go to
// report, everything goes on to next.
type dropWatch struct {
	next   slog.Handler
	report func(tool, why string)
	seen   *sync.Map // tool + "\x00" + why
}

func newDropWatch(next *slog.Logger, report func(tool, why string)) *slog.Logger {
	h := slog.Handler(slog.DiscardHandler)
	if next != nil {
		h = next.Handler()
	}
	return slog.New(&dropWatch{next: h, report: report, seen: &sync.Map{}})
}

func (d *dropWatch) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelError || d.next.Enabled(ctx, l)
}

func (d *dropWatch) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == sdkDropMessage && d.report != nil {
		tool, why := "", ""
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case "tool":
				tool = a.Value.String()
			case "error":
				why = a.Value.String()
			}
			return true
		})
		if tool == "" {
			why = "a tool with no name"
		}
		if _, dup := d.seen.LoadOrStore(tool+"\x00"+why, true); !dup {
			d.report(visible.Cut(tool, 64), visible.Cut(why, 200))
		}
	}
	if d.next.Enabled(ctx, r.Level) {
		return d.next.Handle(ctx, r)
	}
	return nil
}

func (d *dropWatch) WithAttrs(as []slog.Attr) slog.Handler {
	c := *d
	c.next = d.next.WithAttrs(as)
	return &c
}

func (d *dropWatch) WithGroup(name string) slog.Handler {
	c := *d
	c.next = d.next.WithGroup(name)
	return &c
}
