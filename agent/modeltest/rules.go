package modeltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// Rule picks a reply by looking at the end of the request's input.
//
//   - With WhenToolOutput set or AfterTool true it is a tool rule: the last
//     input item must be a function_call_output, and one of the
//     function_call_output items ending the input must contain WhenToolOutput
//     ("" matches any). If WhenUser is also set, the last user message in the
//     input must contain it too (to tell conversations apart).
//   - Otherwise, with WhenUser set, the last input item must be a user
//     message whose text contains WhenUser.
//   - A rule with no conditions matches every request (a catch-all).
//   - WhenAuthorization, when set, must equal the request's Authorization
//     header as well (to tell which key reached the service).
type Rule struct {
	WhenUser          string    `json:"whenUser,omitempty"`
	WhenAuthorization string    `json:"whenAuthorization,omitempty"`
	WhenToolOutput    string    `json:"whenToolOutput,omitempty"`
	AfterTool         bool      `json:"afterTool,omitempty"`
	Reply             ReplyJSON `json:"reply"`
}

// Matches reports whether the rule applies to req.
func (ru Rule) Matches(req Request) bool {
	if ru.WhenAuthorization != "" && req.Authorization != ru.WhenAuthorization {
		return false
	}
	if ru.AfterTool || ru.WhenToolOutput != "" {
		outs := req.trailingToolOutputs()
		if len(outs) == 0 || !strings.Contains(req.LastUserText(), ru.WhenUser) {
			return false
		}
		for _, out := range outs {
			if strings.Contains(out, ru.WhenToolOutput) {
				return true
			}
		}
		return false
	}
	if ru.WhenUser != "" {
		return req.lastIsUserMessage() && strings.Contains(req.LastUserText(), ru.WhenUser)
	}
	return true
}

// ReplyJSON is the JSON form of a [Reply], used in rule files.
type ReplyJSON struct {
	// Text is a string (split into about three deltas) or a list of deltas.
	Text         Deltas      `json:"text,omitempty"`
	Reasoning    []Reasoning `json:"reasoning,omitempty"`
	Calls        []Call      `json:"calls,omitempty"`
	Usage        Usage       `json:"usage,omitzero"`
	HTTPStatus   int         `json:"httpStatus,omitempty"`
	ErrorMessage string      `json:"errorMessage,omitempty"`
	RetryAfterMs int         `json:"retryAfterMs,omitempty"`
	DropAfter    int         `json:"dropAfter,omitempty"`
	NoCompleted  bool        `json:"noCompleted,omitempty"`
	DelayMs      int         `json:"delayMs,omitempty"`
	Failed       string      `json:"failed,omitempty"`
}

// Reply converts the JSON form to a Reply.
func (rj ReplyJSON) Reply() Reply {
	return Reply{
		Text:         append([]string(nil), rj.Text...),
		Reasoning:    append([]Reasoning(nil), rj.Reasoning...),
		Calls:        append([]Call(nil), rj.Calls...),
		Usage:        rj.Usage,
		HTTPStatus:   rj.HTTPStatus,
		ErrorMessage: rj.ErrorMessage,
		RetryAfter:   time.Duration(rj.RetryAfterMs) * time.Millisecond,
		DropAfter:    rj.DropAfter,
		NoCompleted:  rj.NoCompleted,
		Delay:        time.Duration(rj.DelayMs) * time.Millisecond,
		Failed:       rj.Failed,
	}
}

// Deltas is assistant text in JSON: either a string, which is split into
// about three deltas, or an array of strings used as the deltas.
type Deltas []string

// UnmarshalJSON accepts a string or an array of strings.
func (d *Deltas) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*d = SplitText(s, 3)
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return fmt.Errorf("text: want a string or an array of strings: %w", err)
	}
	*d = list
	return nil
}

// LoadRules reads rules from a JSON file holding either an array of rules or
// an object {"rules": [...]}. Unknown fields are errors, to catch typos.
func LoadRules(path string) ([]Rule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rules, err := ParseRules(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rules, nil
}

// ParseRules parses rules in the format LoadRules reads. The result is
// never nil.
func ParseRules(data []byte) ([]Rule, error) {
	data = bytes.TrimSpace(data)
	var rules []Rule
	var err error
	if len(data) > 0 && data[0] == '{' {
		var doc struct {
			Rules []Rule `json:"rules"`
		}
		err = decodeStrict(data, &doc)
		rules = doc.Rules
	} else {
		err = decodeStrict(data, &rules)
	}
	if err != nil {
		return nil, err
	}
	for i, ru := range rules {
		if st := ru.Reply.HTTPStatus; st != 0 && (st < 100 || st > 599) {
			return nil, fmt.Errorf("rule %d: httpStatus %d out of range", i, st)
		}
	}
	if rules == nil {
		rules = []Rule{}
	}
	return rules, nil
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("unexpected data after the rules")
	}
	return nil
}
