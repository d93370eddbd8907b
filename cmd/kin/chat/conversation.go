package chat

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kin-dev/kin/rpc"
)

// The conversation's part of kin chat: the session's model (/model),
// compaction on request (/compact), reasoning summaries shown dimmed, and
// how full the model's window is when a turn ends (turn/completed carries
// what the last turn/usage said).

// model is how the header names a session's model and effort.
func modelText(model, effort string) string {
	if effort != "" {
		return cleanLine(model) + " (effort " + cleanLine(effort) + ")"
	}
	return cleanLine(model)
}

// chooseModel is /model: without arguments it lists the models, marking
// the session's; with an id (and an effort) it switches the session.
func (u *ui) chooseModel(fields []string) {
	if len(fields) == 1 {
		var res modelsListResult
		if err := u.call(rpc.MethodModelsList, struct{}{}, &res); err != nil {
			u.fail(err)
			return
		}
		if u.ed != nil {
			u.ed.comp.setModels(res.Models)
		}
		s := u.scr
		for _, m := range res.Models {
			mark := "  "
			if m.ID == u.model || (u.model == "" && m.ID == res.Default) {
				mark = "* "
			}
			about := fmt.Sprintf("%s, %d tokens", m.API, m.ContextWindow)
			if len(m.Efforts) > 0 {
				about += ", efforts " + strings.Join(m.Efforts, "/")
			}
			if !m.Images {
				about += ", no images"
			}
			if !m.Configured {
				about += ", not configured: " + m.Missing
			}
			s.line(fmt.Sprintf("%s%s  %s  %s", mark, cleanLine(m.ID), cleanLine(m.Name), s.dim(cleanLine(about))))
		}
		return
	}
	if len(fields) > 3 {
		u.usage("/model, /model ID, or /model ID EFFORT")
		return
	}
	if u.busy() || (u.session == "" && !u.newSession("", false)) {
		return
	}
	p := sessionConfigureParams{SessionID: u.session, Model: &fields[1]}
	if len(fields) == 3 {
		p.Effort = &fields[2]
	}
	var res sessionConfigureResult
	if err := u.call(rpc.MethodSessionConfigure, p, &res); err != nil {
		u.fail(err)
		return
	}
	u.model, u.effort = res.Model, res.Effort
	u.window = nil // another window: the next response says how full it is
	u.scr.line(u.scr.dim("This session now uses " + modelText(res.Model, res.Effort) + "."))
}

// loadModels gives the line editor the models for /model's completion.
func (u *ui) loadModels() {
	if u.ed == nil {
		return
	}
	var res modelsListResult
	if u.call(rpc.MethodModelsList, struct{}{}, &res) == nil {
		u.ed.comp.setModels(res.Models)
	}
}

// compact is /compact: the model summarises the conversation now.
func (u *ui) compact() {
	if u.busy() {
		return
	}
	if u.session == "" {
		u.scr.line(u.scr.dim("Nothing to summarise yet."))
		return
	}
	u.scr.line(u.scr.dim("Summarising the conversation…"))
	var res sessionCompactResult
	if err := u.call(rpc.MethodSessionCompact, sessionIDParams{SessionID: u.session}, &res); err != nil {
		u.fail(err)
		return
	}
	if !res.Compacted {
		u.scr.line(u.scr.dim("Nothing to summarise since the last summary."))
		return
	}
	u.window = nil // the summary's size is known at the next response
	// kin's notice says what was done.
}

// reasoning shows a piece of the model's reasoning summary, dimmed.
func (u *ui) reasoning(params json.RawMessage) {
	var r turnReasoning
	if json.Unmarshal(params, &r) != nil || r.SessionID != u.session {
		return
	}
	u.scr.stream("fold:think:"+r.TurnID, u.scr.dim("Thinking> "), "", u.scr.dim(clean(r.Text)))
}

// foldedReasoning is a reasoning summary folded to one row of width
// columns once the answer starts (the line editor's screen): its first
// line, cut to fit, and how many lines it had.
func foldedReasoning(s *screen) func(text string, width int) string {
	return func(text string, width int) string {
		lines := strings.Split(strings.TrimPrefix(text, "Thinking> "), "\n")
		n := 0
		for _, l := range lines {
			if strings.TrimSpace(l) != "" {
				n++
			}
		}
		more := fmt.Sprintf(" … (%d lines)", n)
		room := width - 1 - len("Thinking> ") - len([]rune(more))
		var b strings.Builder
		col := 0
		for _, r := range strings.TrimSpace(lines[0]) {
			if col+runeWidth(r) > room {
				break
			}
			b.WriteRune(r)
			col += runeWidth(r)
		}
		return s.dim("Thinking> " + b.String() + more)
	}
}

// contextLine says how full the model's window is ("" when unknown).
func contextLine(us *rpc.Usage) string {
	if us == nil || us.ContextWindow <= 0 || us.ContextTokens <= 0 {
		return ""
	}
	spent := ""
	if s := spendLine(us); s != "" {
		spent = "; " + s
	}
	return fmt.Sprintf("[context %d of %d tokens, %d%%%s]", us.ContextTokens, us.ContextWindow, us.ContextTokens*100/us.ContextWindow, spent)
}

// gaugeFrom is how full the window must be for the prompt to say so: below
// it the prompt stays short (kin compacts at compactThreshold, 0.8 unless
// settings.json says otherwise).
const gaugeFrom = 50

// contextGauge is the prompt status's word on how full the model's window
// is ("" when unknown, or less than gaugeFrom percent full).
func contextGauge(us *rpc.Usage) string {
	if us == nil || us.ContextWindow <= 0 || us.ContextTokens*100 < gaugeFrom*us.ContextWindow {
		return ""
	}
	return fmt.Sprintf("context %d%%", us.ContextTokens*100/us.ContextWindow)
}

// noteUsage keeps what a turn/usage (or turn/completed) says of the
// window; one that knows nothing (a turn that failed before any response)
// leaves the last one.
func (u *ui) noteUsage(us rpc.Usage) {
	if us.ContextWindow > 0 && us.ContextTokens > 0 {
		u.window = &us
	}
}

// conversationItem shows the second release's history items; it reports
// whether h was one of them.
func (u *ui) conversationItem(h historyItem) bool {
	s := u.scr
	switch h.Type {
	case "reasoning":
		if t := clean(h.Text); s.summarize != nil && strings.Contains(strings.TrimSpace(t), "\n") {
			// folded as it was when it streamed
			s.line(s.summarize("Thinking> "+t, s.width()))
		} else {
			s.line(s.dim("Thinking> " + t))
		}
	case "compaction":
		u.window = nil
		s.line(s.dim("[earlier conversation summarised (" + cleanLine(h.Reason) + ")]"))
		s.indented(s.dim(h.Text), 12)
	case "instructions":
		s.line(s.dim("[project instructions changed: " + cleanLine(strings.Join(h.Changed, ", ")) + "]"))
	case "configure":
		s.line(s.dim("[model: " + modelText(h.Model, h.Effort) + "]"))
	default:
		return false
	}
	return true
}
