package agent

import (
	"strings"
	"sync"
	"time"

	"github.com/kin-dev/kin/agent/session"
)

// An answer is recorded as it streams, in pieces (the first an assistant
// record, the rest continuing it), so what the person saw survives kin being
// killed mid-answer. Pieces are grouped (by size, or after a short while)
// and never synced: a write reaches the kernel, which keeps it when the
// process dies; durability waits for the turn's end.
const (
	answerPiece = 32 << 10
	answerEvery = 200 * time.Millisecond
)

// answer records one turn's streamed text.
type answer struct {
	t *turn
	// after schedules a flush (time.AfterFunc; tests replace it).
	after func(time.Duration, func()) func() bool

	// mu guards the fields below; it is taken before the session's write
	// lock, never after.
	mu      sync.Mutex
	buf     strings.Builder
	started bool // this message has a first piece on record
	refusal bool // this message is the model's refusal
	kept    int  // bytes of this message taken (recorded or buffered)
	dropped int  // bytes over session.MaxText, not recorded
	stop    func() bool
}

func newAnswer(t *turn) *answer {
	return &answer{t: t, after: func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }}
}

// add takes one delta of the answer's text, or of the model's refusal: a
// refusal after text (or text after a refusal) is a message of its own.
func (a *answer) add(d string, refusal bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if refusal != a.refusal {
		a.endLocked("")
		a.refusal = refusal
	}
	if room := session.MaxText - a.kept; len(d) > room {
		kept := session.Prefix(d, max(room, 0))
		a.dropped += len(d) - len(kept)
		d = kept
	}
	a.kept += len(d)
	a.buf.WriteString(d)
	switch {
	case a.buf.Len() >= answerPiece:
		a.flushLocked()
	case a.stop == nil && a.buf.Len() > 0:
		a.stop = a.after(answerEvery, a.flush)
	}
}

// flush records what is buffered.
func (a *answer) flush() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.flushLocked()
}

func (a *answer) flushLocked() {
	if a.stop != nil {
		a.stop()
		a.stop = nil
	}
	if a.buf.Len() == 0 {
		return
	}
	a.record(a.buf.String(), "")
	a.buf = strings.Builder{}
}

func (a *answer) record(text, phase string) {
	a.t.record(session.Record{Type: session.TypeAssist, Text: text, Cont: a.started, Refusal: a.refusal, Phase: phase})
	a.started = true
}

// end records the rest of the message (with a note of what was over the
// cap) and its phase, and readies the answer for the turn's next message.
func (a *answer) end(phase string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.endLocked(phase)
}

func (a *answer) endLocked(phase string) {
	if a.dropped > 0 {
		a.buf.WriteString(session.CutMarker(a.dropped))
	}
	if a.stop != nil {
		a.stop()
		a.stop = nil
	}
	if a.buf.Len() > 0 || (a.started && phase != "") {
		a.record(a.buf.String(), phase) // the phase, on the message's last piece
		a.buf = strings.Builder{}
	}
	a.started, a.refusal, a.kept, a.dropped = false, false, 0, 0
}
