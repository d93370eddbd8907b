package session

import "github.com/kin-dev/kin/agent/tool"

// HistoryItem is what an editor needs to redraw one entry of a session.
type HistoryItem struct {
	Type   string `json:"type"` // user, assistant, toolCall, decision, turn
	TurnID string `json:"turnId,omitempty"`
	Text   string `json:"text,omitempty"`

	CallID    string         `json:"callId,omitempty"`
	Name      string         `json:"name,omitempty"`
	Kind      tool.Kind      `json:"kind,omitempty"`
	Title     string         `json:"title,omitempty"`
	Arguments string         `json:"arguments,omitempty"`
	Status    string         `json:"status,omitempty"`
	Output    string         `json:"output,omitempty"`
	Content   []tool.Content `json:"content,omitempty"`

	RequestID string `json:"requestId,omitempty"`
	Decision  string `json:"decision,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// ApprovalKind is tool_call, server_launch or acknowledge_unknown.
	ApprovalKind string         `json:"approvalKind,omitempty"`
	Approved     *tool.Approval `json:"approved,omitempty"`

	Error string `json:"error,omitempty"`
	Usage *Usage `json:"usage,omitempty"`

	Server string `json:"server,omitempty"`
	Mode   string `json:"mode,omitempty"`
}

// History turns records into the items an editor redraws. A tool call and its
// result become one item carrying the final status; a call whose tool no
// longer exists is shown all the same.
func History(recs []Record) []HistoryItem {
	var out []HistoryItem
	callIndex := map[string]int{}
	for _, r := range recs {
		switch r.Type {
		case TypeUser, TypeAssist:
			out = append(out, HistoryItem{Type: r.Type, TurnID: r.TurnID, Text: r.Text})
		case TypeCall:
			callIndex[r.CallID] = len(out)
			out = append(out, HistoryItem{Type: "toolCall", TurnID: r.TurnID, CallID: r.CallID, Name: r.Name,
				Kind: r.Kind, Title: r.Title, Arguments: r.Arguments, Status: "pending"})
		case TypeResult:
			if i, ok := callIndex[r.CallID]; ok {
				out[i].Status, out[i].Output, out[i].Content = r.Status, r.Output, r.Content
				if r.Title != "" {
					out[i].Title = r.Title
				}
			}
		case TypeDecision:
			out = append(out, HistoryItem{Type: "decision", TurnID: r.TurnID, CallID: r.CallID, RequestID: r.RequestID,
				ApprovalKind: r.ApprovalKind, Decision: r.Decision, Reason: r.Reason, Title: r.Title, Approved: r.Approved})
		case TypeTurn:
			out = append(out, HistoryItem{Type: "turn", TurnID: r.TurnID, Status: r.Status, Error: r.Error, Usage: r.Usage})
		case TypeElicit:
			out = append(out, HistoryItem{Type: "elicitation", TurnID: r.TurnID, CallID: r.CallID, RequestID: r.RequestID,
				Server: r.Server, Mode: r.Mode, Title: r.Title, Decision: r.Decision, Reason: r.Reason})
		}
	}
	return out
}

// Unknown is a call whose outcome is not known and not yet acknowledged.
type Unknown struct {
	CallID string
	Name   string
	TurnID string
}

// PendingUnknown lists calls that ended unknown since the last acknowledgement.
func PendingUnknown(recs []Record) []Unknown {
	var out []Unknown
	for _, r := range recs {
		switch {
		case r.Type == TypeResult && r.Status == string(tool.StatusUnknown):
			out = append(out, Unknown{CallID: r.CallID, Name: r.Name, TurnID: r.TurnID})
		case r.Type == TypeAck:
			out = nil
		}
	}
	return out
}

// Unfinished returns the results to record for calls a previous process
// left without one (it stopped mid-call). A call the person had allowed may
// have run, so its outcome is unknown and must be acknowledged like any
// other; a call never allowed did not run.
func Unfinished(recs []Record) []Record {
	answered, allowed := map[string]bool{}, map[string]bool{}
	for _, r := range recs {
		switch {
		case r.Type == TypeResult:
			answered[r.CallID] = true
		case r.Type == TypeDecision && r.CallID != "" && (r.Decision == "allow_once" || r.Decision == "allow_always"):
			allowed[r.CallID] = true
		}
	}
	var out []Record
	for _, r := range recs {
		if r.Type != TypeCall || answered[r.CallID] {
			continue
		}
		res := Record{Type: TypeResult, TurnID: r.TurnID, CallID: r.CallID, Name: r.Name,
			Status: string(tool.StatusFailed), Output: "not run: kin stopped before this call was decided"}
		if allowed[r.CallID] {
			res.Status, res.Output = string(tool.StatusUnknown), "kin stopped while this call ran: it may have happened"
		}
		out = append(out, res)
		answered[r.CallID] = true
	}
	return out
}
