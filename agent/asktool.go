package agent

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/agent/visible"
)

// AskToolName is the ask tool's name; MCP tools may not take it.
const AskToolName = "ask"

// What one ask call may put to the person.
const (
	maxQuestions   = 8
	maxQuestionLen = 1000 // characters
	maxOptions     = 20
	maxOptionLen   = 200
)

// Answers to a question (the elicitation actions).
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// ReasonHeadless is why a question nobody could answer was declined: the
// front end said no person can answer forms (a piped kin chat, an editor
// without forms).
const ReasonHeadless = "headless"

//go:embed ask.md
var askDescription string

const askSchema = `{
  "type": "object",
  "properties": {
    "questions": {
      "type": "array",
      "minItems": 1,
      "maxItems": 8,
      "items": {
        "type": "object",
        "properties": {
          "question": {"type": "string", "description": "The question, ending with a question mark."},
          "options": {"type": "array", "items": {"type": "string"}, "description": "2 to 20 short answers to choose from; leave out for a free-text answer."},
          "multiSelect": {"type": "boolean", "description": "true: the person may pick several options."}
        },
        "required": ["question"],
        "additionalProperties": false
      }
    }
  },
  "required": ["questions"],
  "additionalProperties": false
}`

// Question is what kin's ask tool puts to the person: one form, one field
// per question (sent as an elicitation/request with "source":"kin").
type Question struct {
	SessionID, TurnID, CallID string
	Message                   string // what the form is about
	Items                     []QuestionItem
}

// QuestionItem is one question of the form: free text when Options is
// empty, else one of Options (several when Multiple).
type QuestionItem struct {
	Name     string // the form field's name: q1, q2, …
	Question string
	Options  []string
	Multiple bool
}

// Reply is how the person answered.
type Reply struct {
	RequestID string
	Action    string // accept, decline, cancel
	// Answers holds, for accept, each field's answer: a string, or a
	// []string for a multi-select question.
	Answers map[string]any
	// Reason is why the question ended: person, cancelled, disconnected,
	// shutdown, headless.
	Reason string
}

// Asker puts kin's own questions to the person and waits. It must return
// when ctx ends, and decline at once (ReasonHeadless) when nobody can
// answer.
type Asker interface {
	AskPerson(ctx context.Context, q Question) Reply
}

// askTool is the ask tool for one turn.
type askTool struct{ t *turn }

func (askTool) Spec() tool.Spec {
	return tool.Spec{Name: AskToolName, Description: strings.TrimSpace(askDescription),
		Parameters: json.RawMessage(askSchema), Kind: tool.KindOther}
}

// ReadOnly implements tool.ReadOnlyTool: asking changes nothing, so the ask
// mode offers it.
func (askTool) ReadOnly() bool { return true }

func (a askTool) Prepare(_ context.Context, env tool.Env, args json.RawMessage) (*tool.Action, error) {
	items, err := parseQuestions(args)
	if err != nil {
		return nil, err
	}
	q := Question{SessionID: env.SessionID, TurnID: env.TurnID, CallID: env.CallID, Message: askMessage(items), Items: items}
	return &tool.Action{Run: func(ctx context.Context, _ func(string)) tool.Result {
		return a.t.askPerson(ctx, q)
	}}, nil
}

// askMessage heads the form: the question itself when there is one.
func askMessage(items []QuestionItem) string {
	if len(items) == 1 {
		return items[0].Question
	}
	return fmt.Sprintf("kin has %d questions", len(items))
}

func parseQuestions(args json.RawMessage) ([]QuestionItem, error) {
	var in struct {
		Questions []struct {
			Question    string   `json:"question"`
			Options     []string `json:"options"`
			MultiSelect bool     `json:"multiSelect"`
		} `json:"questions"`
	}
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("%s: the arguments must be {\"questions\": [{\"question\", \"options\"?, \"multiSelect\"?}, …]}: %v", AskToolName, err)
	}
	switch n := len(in.Questions); {
	case n == 0:
		return nil, fmt.Errorf("%s: give at least one question", AskToolName)
	case n > maxQuestions:
		return nil, fmt.Errorf("%s: %d questions; ask at most %d at once", AskToolName, n, maxQuestions)
	}
	items := make([]QuestionItem, 0, len(in.Questions))
	for i, q := range in.Questions {
		n := i + 1
		// What the person reads: no hidden characters.
		text := strings.TrimSpace(visible.Strip(q.Question))
		switch {
		case text == "":
			return nil, fmt.Errorf("%s: question %d is empty", AskToolName, n)
		case utf8.RuneCountInString(text) > maxQuestionLen:
			return nil, fmt.Errorf("%s: question %d is longer than %d characters", AskToolName, n, maxQuestionLen)
		case len(q.Options) == 1 || len(q.Options) > maxOptions:
			return nil, fmt.Errorf("%s: question %d has %d options; give 2 to %d, or none for a free-text answer", AskToolName, n, len(q.Options), maxOptions)
		case q.MultiSelect && len(q.Options) == 0:
			return nil, fmt.Errorf("%s: question %d sets multiSelect without options", AskToolName, n)
		}
		item := QuestionItem{Name: fmt.Sprintf("q%d", n), Question: text, Multiple: q.MultiSelect}
		seen := map[string]bool{}
		for _, o := range q.Options {
			o = strings.TrimSpace(visible.Strip(o))
			switch {
			case o == "":
				return nil, fmt.Errorf("%s: question %d has an empty option", AskToolName, n)
			case utf8.RuneCountInString(o) > maxOptionLen:
				return nil, fmt.Errorf("%s: question %d has an option longer than %d characters", AskToolName, n, maxOptionLen)
			case seen[o]:
				return nil, fmt.Errorf("%s: question %d lists the option %q twice", AskToolName, n, o)
			}
			seen[o] = true
			item.Options = append(item.Options, o)
		}
		items = append(items, item)
	}
	return items, nil
}

// askPerson puts the question to the person, records how it was answered
// (as an elicitation of source kin) and tells the model.
func (t *turn) askPerson(ctx context.Context, q Question) tool.Result {
	r := Reply{Action: ActionDecline, Reason: ReasonHeadless}
	if a := t.svc.opts.Asker; a != nil {
		r = a.AskPerson(ctx, q)
	}
	t.record(session.Record{Type: session.TypeElicit, CallID: q.CallID, RequestID: r.RequestID, Source: "kin", Mode: "form",
		Title: q.Message, Decision: r.Action, Reason: r.Reason})
	switch {
	case r.Action == ActionAccept:
		return tool.Result{Status: tool.StatusCompleted, Output: answersText(q, r.Answers)}
	case r.Reason == ReasonHeadless:
		return tool.Result{Status: tool.StatusDenied, Output: "Declined: no person can answer in this run (kin runs where nobody can fill in a form). " +
			"Go on without the answer, or stop and say what you need to know."}
	case r.Reason == permission.ReasonCancelled && ctx.Err() != nil:
		return tool.Result{Status: tool.StatusDenied, Output: "The turn was cancelled before the person answered."}
	case r.Action == ActionCancel:
		return tool.Result{Status: tool.StatusDenied, Output: "The person dismissed the question without answering (cancel). Go on without the answer, or stop and say what you need; do not ask the same again right away."}
	}
	return tool.Result{Status: tool.StatusDenied, Output: "The person declined to answer. Go on without the answer, or stop and say what you need; do not ask the same again right away."}
}

// answersText gives the model each question with its answer.
func answersText(q Question, answers map[string]any) string {
	var b strings.Builder
	b.WriteString("The person answered:\n")
	for _, it := range q.Items {
		var a string
		switch v := answers[it.Name].(type) {
		case string:
			a = v
		case []string:
			a = strings.Join(v, "; ")
			if len(v) == 0 {
				a = "(none of the options)"
			}
		case nil:
			a = "(no answer)"
		default:
			a = fmt.Sprint(v)
		}
		fmt.Fprintf(&b, "Q: %s\nA: %s\n", it.Question, a)
	}
	return strings.TrimRight(b.String(), "\n")
}
