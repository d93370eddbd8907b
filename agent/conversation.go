package agent

import (
	"fmt"
	"strings"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
)

// ContextBudget bounds how many bytes of tool output the model is sent per
// request. Every call's result counts toward it (built-in and MCP alike);
// when a long session goes over, the oldest outputs are replaced by a short
// note, newest first kept, and the conversation's text is never dropped.
const ContextBudget = 384 << 10

// convo is what the model is sent, rebuilt from a session's records and
// kept compactly: messages and call arguments in memory, but of each tool
// output only its length and where its record lies in the log. Outputs are
// read back when a request needs them, newest first and only up to the
// context budget, so a long session's outputs never all sit in memory.
type convo struct {
	items    []convItem
	answered map[string]bool
	// unknown lists calls that ended unknown since the last acknowledgement.
	unknown []session.Unknown
	// For the note on a turn that ended without an answer.
	asked, answered1 bool
}

type convItem struct {
	kind   model.ItemKind
	role   string
	text   string   // a message's text, or a call's arguments
	parts  []string // an answer's later pieces
	callID string
	name   string
	// For outputs: the framed output's length, and where the result record
	// is (n == 0: the output is in text, not on disk).
	outLen int
	off    int64
	n      int
}

func newConvo() *convo { return &convo{answered: map[string]bool{}} }

// add takes a record as it is in the log (off, n locate it; n == 0 when it
// could not be written and is kept whole).
func (c *convo) add(r session.Record, off int64, n int) {
	switch r.Type {
	case session.TypeUser:
		c.items = append(c.items, convItem{kind: model.Message, role: "user", text: r.Text})
		c.asked, c.answered1 = true, false
	case session.TypeAssist:
		c.answered1 = true
		if last := len(c.items) - 1; r.Cont && last >= 0 && c.items[last].kind == model.Message && c.items[last].role == "assistant" {
			c.items[last].parts = append(c.items[last].parts, r.Text)
			return
		}
		c.items = append(c.items, convItem{kind: model.Message, role: "assistant", text: r.Text})
	case session.TypeCall:
		c.answered1 = true
		c.items = append(c.items, convItem{kind: model.FunctionCall, callID: r.CallID, name: r.Name, text: r.Arguments})
	case session.TypeResult:
		c.answered[r.CallID] = true
		it := convItem{kind: model.FunctionOutput, callID: r.CallID, off: off, n: n}
		prefix := outputPrefix(r.Status)
		it.outLen = len(prefix) + len(r.Output)
		if n == 0 {
			it.text = prefix + r.Output
		}
		c.items = append(c.items, it)
		if r.Status == string(tool.StatusUnknown) {
			c.unknown = append(c.unknown, session.Unknown{CallID: r.CallID, Name: r.Name, TurnID: r.TurnID})
		}
	case session.TypeAck:
		c.unknown = nil
	case session.TypeUndo:
		if r.Undo != nil {
			c.items = append(c.items, convItem{kind: model.Message, role: "user", text: undoNote(r.Undo)})
		}
	case session.TypeTurn:
		// A question left without any answer (the turn failed, was
		// cancelled, or kin stopped) would reach the model as two questions
		// in a row; say what happened instead.
		if c.asked && !c.answered1 && r.Status != TurnCompleted {
			note := "[no answer: this turn ended " + r.Status
			if r.Error != "" {
				note += ": " + r.Error
			}
			c.items = append(c.items, convItem{kind: model.Message, role: "assistant", text: note + "]"})
		}
		c.asked, c.answered1 = false, false
	}
}

// outputPrefix tells the model how a call ended, before what it produced.
func outputPrefix(status string) string {
	switch tool.Status(status) {
	case tool.StatusCompleted:
		return ""
	case tool.StatusUnknown:
		return "[unknown: the outcome is not known; it may have happened and must not be retried automatically]\n"
	default:
		return "[" + status + "]\n"
	}
}

// model builds the request input. read fetches a result record back from
// the log.
func (c *convo) model(read func(off int64, n int) (session.Record, error)) []model.Item {
	// Outputs within the budget, newest first.
	keep := make(map[int]bool)
	used := 0
	for i := len(c.items) - 1; i >= 0; i-- {
		if it := c.items[i]; it.kind == model.FunctionOutput {
			if used+it.outLen <= ContextBudget {
				keep[i] = true
			}
			used += it.outLen
		}
	}
	out := make([]model.Item, 0, len(c.items))
	for i, it := range c.items {
		switch it.kind {
		case model.Message:
			text := it.text
			if len(it.parts) > 0 {
				text += strings.Join(it.parts, "")
			}
			out = append(out, model.Item{Kind: model.Message, Role: it.role, Text: text})
		case model.FunctionCall:
			out = append(out, model.Item{Kind: model.FunctionCall, CallID: it.callID, Name: it.name, Arguments: it.text})
			if !c.answered[it.callID] {
				out = append(out, model.Item{Kind: model.FunctionOutput, CallID: it.callID,
					Output: "[unknown] no result was recorded for this call; it may or may not have run"})
			}
		case model.FunctionOutput:
			o := model.Item{Kind: model.FunctionOutput, CallID: it.callID}
			switch {
			case !keep[i]:
				o.Output = fmt.Sprintf("[output of %d bytes left out to fit the context budget; call the tool again if it is still needed]", it.outLen)
			case it.n == 0:
				o.Output = it.text
			default:
				if r, err := read(it.off, it.n); err != nil {
					o.Output = "[kin could not read this output back from the session log: " + err.Error() + "]"
				} else {
					o.Output = outputPrefix(r.Status) + r.Output
				}
			}
			out = append(out, o)
		}
	}
	return out
}
