package model

import (
	"strings"
)

// answer assembles one streamed answer for both APIs: each message's text
// and refusal as their pieces come (handed to the handlers at once), the
// message boundaries, and the reasoning streamed between them. A service
// that sends a message whole instead of in pieces (in the item's done
// event, or only in the completed response) is shown all the same, once.
type answer struct {
	h   Handlers
	out Response
	// The message being streamed: its pieces so far, its phase, and
	// whether any piece came.
	text, refusal strings.Builder
	phase         string
	open          bool
	// reasoning is the reasoning text streamed since the last reasoning
	// item ended (a Chat server's, or an open Responses server's).
	reasoning strings.Builder
	// summarised says summary or reasoning pieces streamed for the item
	// being reasoned.
	summarised bool
	// items are the ids of the function call items taken (addCall).
	items map[string]bool
	// heard says an event of the stream was read.
	heard bool
}

func newAnswer(h Handlers) *answer { return &answer{h: h} }

// addText takes a piece of the answer's text.
func (a *answer) addText(d string) { a.add(&a.text, a.h.text, d) }

// addRefusal takes a piece of the model's refusal.
func (a *answer) addRefusal(d string) { a.add(&a.refusal, a.h.refusal, d) }

func (a *answer) add(b *strings.Builder, hand func(string), d string) {
	if d == "" {
		return
	}
	a.open = true
	b.WriteString(d)
	hand(d)
}

// addReasoning takes a piece of reasoning to show (a summary's, or the
// reasoning itself); keep says it is the reasoning itself, which the item
// that ends it carries.
func (a *answer) addReasoning(d string, keep bool) {
	if d == "" {
		return
	}
	a.summarised = true
	if keep {
		a.reasoning.WriteString(d)
	}
	a.h.reasoning(d)
}

// startMessage notes the phase a message item announced.
func (a *answer) startMessage(phase string) {
	if phase != "" {
		a.phase = phase
	}
}

// endMessage ends the message being streamed. A message whose pieces never
// streamed is taken whole from what its end carried (text and refusal), so
// a service that sends it only there is shown too.
func (a *answer) endMessage(whole outputItem) {
	if !a.open {
		a.addText(whole.Text)
		a.addRefusal(whole.Refusal)
	}
	a.startMessage(whole.Phase)
	a.flushMessage(true)
}

// flushMessage ends the message being streamed, if any piece of it came;
// tell hands it to the handlers.
func (a *answer) flushMessage(tell bool) {
	if !a.open {
		a.phase = ""
		return
	}
	m := AssistantMessage{Text: a.text.String(), Refusal: a.refusal.String(), Phase: a.phase}
	a.out.Messages = append(a.out.Messages, m)
	a.text, a.refusal, a.phase, a.open = strings.Builder{}, strings.Builder{}, "", false
	if tell {
		a.h.message(m)
	}
}

// endReasoning ends a reasoning item: it takes the reasoning streamed for
// it when the item carries none, shows a summary that never streamed, and
// hands the item over.
func (a *answer) endReasoning(r Reasoning) {
	if r.Text == "" {
		r.Text = a.reasoning.String()
	}
	if s := r.Shown(); !a.summarised && s != "" {
		a.h.reasoning(s)
	}
	a.reasoning, a.summarised = strings.Builder{}, false
	a.out.Reasoning = append(a.out.Reasoning, r)
	a.h.reasoningDone(r)
}

// addCall takes a finished call; item is its output item's id ("" where
// the API has none). A call delivered again (its item's id seen, or the
// same call id, name and arguments as a call taken) is the same call, and
// is taken once: a service or a proxy that replays an event must not have
// a command run twice. Calls that differ in anything are each the model's.
func (a *answer) addCall(c Call, item string) {
	if item != "" {
		if a.items[item] {
			return
		}
		if a.items == nil {
			a.items = map[string]bool{}
		}
		a.items[item] = true
	}
	for _, o := range a.out.Calls {
		if c.CallID != "" && o == c {
			return
		}
	}
	a.out.Calls = append(a.out.Calls, c)
}

// response is the answer so far: a message still streaming counts as
// ended (the handlers are not told; the stream ended or failed there).
func (a *answer) response() *Response {
	a.flushMessage(false)
	var texts []string
	for _, m := range a.out.Messages {
		if m.Text != "" {
			texts = append(texts, m.Text)
		}
	}
	a.out.Text = strings.Join(texts, "\n\n")
	return &a.out
}
