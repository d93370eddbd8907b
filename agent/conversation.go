package agent

import (
	"fmt"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
)

// conversation rebuilds what the model is sent from a session's records. A
// call that never got a result (the process died mid-call) gets one saying
// so, because the Responses API wants every call answered; a call to a tool
// that no longer exists is replayed as it was.
// ContextBudget bounds how many bytes of tool output the model is sent per
// request. Every call's result counts toward it (built-in and MCP alike);
// when a long session goes over, the oldest outputs are replaced by a short
// note, newest first kept, and the conversation's text is never dropped.
const ContextBudget = 384 << 10

func conversation(recs []session.Record) []model.Item {
	items := conversationItems(recs)
	used := 0
	for i := len(items) - 1; i >= 0; i-- {
		if items[i].Kind != model.FunctionOutput {
			continue
		}
		if used+len(items[i].Output) > ContextBudget {
			items[i].Output = fmt.Sprintf("[output of %d bytes left out to fit the context budget; call the tool again if it is still needed]", len(items[i].Output))
		}
		used += len(items[i].Output)
	}
	return items
}

func conversationItems(recs []session.Record) []model.Item {
	var items []model.Item
	answered := map[string]bool{}
	for _, r := range recs {
		if r.Type == session.TypeResult {
			answered[r.CallID] = true
		}
	}
	for _, r := range recs {
		switch r.Type {
		case session.TypeUser:
			items = append(items, model.Item{Kind: model.Message, Role: "user", Text: r.Text})
		case session.TypeAssist:
			items = append(items, model.Item{Kind: model.Message, Role: "assistant", Text: r.Text})
		case session.TypeCall:
			items = append(items, model.Item{Kind: model.FunctionCall, CallID: r.CallID, Name: r.Name, Arguments: r.Arguments})
			if !answered[r.CallID] {
				items = append(items, model.Item{Kind: model.FunctionOutput, CallID: r.CallID,
					Output: "[unknown] no result was recorded for this call; it may or may not have run"})
			}
		case session.TypeResult:
			items = append(items, model.Item{Kind: model.FunctionOutput, CallID: r.CallID, Output: modelOutput(r)})
		}
	}
	return items
}

// modelOutput tells the model how a call ended along with what it produced.
func modelOutput(r session.Record) string {
	switch tool.Status(r.Status) {
	case tool.StatusCompleted:
		return r.Output
	case tool.StatusUnknown:
		return "[unknown: the outcome is not known; it may have happened and must not be retried automatically]\n" + r.Output
	default:
		return "[" + r.Status + "]\n" + r.Output
	}
}
