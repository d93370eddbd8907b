package acp

import (
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent"
	kinsession "github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/rpc"
)

// events turns the agent's events into session/updates.
type events struct{ s *Server }

func (e events) session(id string) *session {
	e.s.mu.Lock()
	defer e.s.mu.Unlock()
	return e.s.sessions[id]
}

func (e events) TurnStarted(v agent.TurnStarted) {
	e.s.log.Info("turn started", zap.String("session", v.SessionID), zap.String("turn", v.TurnID), zap.String("parent", v.Parent.SessionID))
}

func (e events) Delta(v agent.Delta) {
	if e.nested(v.Parent, v.Text) {
		return
	}
	e.s.update(v.SessionID, ContentChunk{SessionUpdate: UpdateAgentMessage, Content: TextBlock(v.Text)})
}

func (e events) ToolCall(v agent.ToolCall) {
	if e.nested(v.Parent, subagentLine(v)) {
		return
	}
	// While session/load or session/resume opens the session, its calls'
	// updates wait for the answer: the session is remembered then, and the
	// client has the history they update.
	e.s.disp.AwaitReply(rpc.SessionKey(v.SessionID), heldToolCalls)
	ss := e.session(v.SessionID)
	if ss == nil {
		return // a session closed on this connection meanwhile
	}
	if v.Status == agent.CallRunning && v.OutputDelta != "" {
		ss.stream(e.s, v.CallID).add(v.OutputDelta)
		return
	}
	ss.mu.Lock()
	first := !ss.reported[v.CallID]
	ss.reported[v.CallID] = true
	st := ss.streams[v.CallID]
	if final(v.Status) {
		delete(ss.streams, v.CallID)
	}
	ss.mu.Unlock()
	if st != nil && final(v.Status) {
		st.stop() // the final update carries the whole output
	}
	e.s.update(v.SessionID, toolCallUpdate(v, first, ss.cwd()))
}

func (e events) TurnDone(v agent.TurnDone) {
	if v.Parent.SessionID != "" {
		return // a subagent's: its delegate call's end says how it went
	}
	e.s.log.Info("turn ended", zap.String("session", v.SessionID), zap.String("turn", v.TurnID), zap.String("status", v.Status),
		zap.Int64("inputTokens", v.Usage.InputTokens), zap.Int64("outputTokens", v.Usage.OutputTokens), zap.String("error", v.Error))
	ss := e.session(v.SessionID)
	if ss == nil {
		return
	}
	e.s.titleChanged(ss)
	ss.mu.Lock()
	done := ss.done
	if done != nil && ss.turnID == v.TurnID {
		ss.done, ss.turnID = nil, ""
	} else {
		done = nil
	}
	ss.mu.Unlock()
	if done != nil {
		done <- v
	}
}

// Notice is something the person should see. What a compaction did is
// told by compaction_update to a client that takes those, as a notice to
// one that takes notices, else as a short agent message while a prompt's
// turn runs (a /compact prompt answers with its own message).
func (e events) Notice(v agent.Notice) {
	if sid, _, ok := e.s.frontOf(v.Parent); ok {
		e.s.notice(sid, v.Level, "subagent: "+v.Message)
		return
	}
	if (v.Source == agent.SourceCompaction || v.Source == agent.SourceCompacting) && v.SessionID != "" {
		caps := e.s.clientCaps()
		switch {
		case caps.Session != nil && caps.Session.Compaction != nil:
			e.s.log.Info("notice", zap.String("session", v.SessionID), zap.String("level", v.Level), zap.String("message", v.Message))
			return // compaction_update said it
		case caps.Session == nil || caps.Session.Notices == nil:
			if v.Source == agent.SourceCompacting {
				return // the message when it is done is enough in a transcript
			}
			if ss := e.session(v.SessionID); ss != nil && ss.prompting() {
				e.s.update(v.SessionID, ContentChunk{SessionUpdate: UpdateAgentMessage, Content: TextBlock("[kin] " + v.Message + "\n\n")})
			}
		}
	}
	e.s.notice(v.SessionID, v.Level, v.Message)
}

// Compaction implements agent.CompactionEvents: ACP's compaction_update,
// for a client that advertised session.compaction; the summary is the one
// the model goes on from.
func (e events) Compaction(v agent.Compaction) {
	caps := e.s.clientCaps()
	if caps.Session == nil || caps.Session.Compaction == nil || e.session(v.SessionID) == nil {
		return
	}
	u := CompactionUpdate{SessionUpdate: UpdateCompaction, CompactionID: v.ID, Status: v.Status, Error: v.Error,
		Meta: Meta{"kin": map[string]any{"reason": v.Reason}}}
	if v.Summary != "" {
		u.Summary = []ContentBlock{TextBlock(v.Summary)}
	}
	e.s.update(v.SessionID, u)
}

var _ agent.CompactionEvents = events{}

// Plan is the model's whole plan after each update_plan call.
func (e events) Plan(v agent.PlanUpdate) { e.s.update(v.SessionID, planUpdate(v.Entries)) }

// Reasoning is the model's reasoning summary, as ACP's thought chunks.
func (e events) Reasoning(v agent.ReasoningDelta) {
	if v.Parent.SessionID != "" {
		return // a subagent's thoughts stay in its own session
	}
	e.s.update(v.SessionID, ContentChunk{SessionUpdate: UpdateAgentThought, Content: TextBlock(v.Text)})
}

// Usage is how full the model's window is, after every model response.
func (e events) Usage(v agent.UsageUpdate) {
	if v.ContextWindow <= 0 || v.Parent.SessionID != "" {
		return
	}
	u := UsageUpdate{SessionUpdate: UpdateUsage, Used: v.ContextTokens, Size: v.ContextWindow}
	if v.Currency != "" {
		u.Cost = &Cost{Amount: v.SessionCost, Currency: v.Currency}
	}
	e.s.update(v.SessionID, u)
}

// notice tells the person something: a notice update on the session when
// the client shows them (session.notices), else the log.
func (s *Server) notice(sessionID, level, message string) {
	caps := s.clientCaps()
	s.log.Info("notice", zap.String("session", sessionID), zap.String("level", level), zap.String("message", message))
	if sessionID == "" || caps.Session == nil || caps.Session.Notices == nil {
		return
	}
	s.update(sessionID, NoticeUpdate{SessionUpdate: UpdateNotice, Severity: level, Title: message})
}

// titleChanged tells the client the session's title once kin named it
// (after its first question).
func (s *Server) titleChanged(ss *session) {
	svc, _ := s.service()
	list, err := svc.ListSessions()
	if err != nil {
		return
	}
	for _, in := range list {
		if in.SessionID != ss.id {
			continue
		}
		ss.mu.Lock()
		changed := in.Title != "" && in.Title != ss.title
		ss.title = in.Title
		ss.mu.Unlock()
		if changed {
			s.update(ss.id, SessionInfoUpdate{SessionUpdate: UpdateSessionInfo, Title: in.Title,
				UpdatedAt: in.UpdatedAt.UTC().Format(time.RFC3339)})
		}
		return
	}
}

// Streamed output: a running command's output goes to the client as the
// call's content, at most every outputEvery (the whole output so far, cut
// to its last outputKeep bytes: content replaces what the card showed).
const (
	outputEvery = 100 * time.Millisecond
	outputKeep  = 64 << 10
)

// outputStream is one running call's output.
type outputStream struct {
	s      *Server
	ss     *session
	callID string

	// mu guards the fields below, and is held while an update is sent,
	// so a stale update never follows a newer one.
	mu      sync.Mutex
	buf     strings.Builder
	last    time.Time
	timer   *time.Timer
	stopped bool
}

func (ss *session) stream(s *Server, callID string) *outputStream {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	st := ss.streams[callID]
	if st == nil {
		st = &outputStream{s: s, ss: ss, callID: callID}
		ss.streams[callID] = st
	}
	return st
}

func (o *outputStream) add(chunk string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stopped {
		return
	}
	o.buf.WriteString(chunk)
	if o.buf.Len() > 2*outputKeep { // keep memory bounded
		tail := o.buf.String()[o.buf.Len()-outputKeep:]
		o.buf.Reset()
		o.buf.WriteString(tail)
	}
	switch wait := outputEvery - time.Since(o.last); {
	case wait <= 0:
		o.sendLocked()
	case o.timer == nil:
		o.timer = time.AfterFunc(wait, o.flush)
	}
}

func (o *outputStream) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.timer = nil
	if !o.stopped {
		o.sendLocked()
	}
}

func (o *outputStream) sendLocked() {
	o.last = time.Now()
	text := o.buf.String()
	if len(text) > outputKeep {
		text = "…" + strings.ToValidUTF8(text[len(text)-outputKeep:], "")
	}
	o.s.update(o.ss.id, ToolCall{SessionUpdate: UpdateToolCallUpdate, ToolCallID: o.callID, Status: StatusInProgress,
		Content: []ToolCallContent{textContent(text)}, Meta: kinMeta(agent.CallRunning, "")})
}

// stop ends the stream: nothing more is sent for it.
func (o *outputStream) stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stopped = true
	if o.timer != nil {
		o.timer.Stop()
		o.timer = nil
	}
}

// replay sends one history item of a loaded session as the update that
// first showed it: the person's question, the answer, every tool call
// with its final status and content, the plan as it stood after each
// change, the mode the person switched to, what an undo or a rollback
// did.
func (s *Server) replay(ss *session, it kinsession.HistoryItem) {
	switch it.Type {
	case "user":
		s.update(ss.id, ContentChunk{SessionUpdate: UpdateUserMessage, Content: TextBlock(it.Text)})
	case "assistant":
		s.update(ss.id, ContentChunk{SessionUpdate: UpdateAgentMessage, Content: TextBlock(it.Text)})
	case "reasoning":
		s.update(ss.id, ContentChunk{SessionUpdate: UpdateAgentThought, Content: TextBlock(it.Text)})
	case "toolCall":
		c := agent.ToolCall{SessionID: ss.id, TurnID: it.TurnID, CallID: it.CallID, Name: it.Name, Kind: it.Kind, Title: it.Title,
			Arguments: it.Arguments, Status: it.Status, Output: it.Output, Content: it.Content, Links: it.Links}
		if c.Status == "" {
			c.Status = agent.CallPending // a call whose result is not on record yet
		}
		ss.mu.Lock()
		ss.reported[it.CallID] = true
		ss.mu.Unlock()
		u := toolCallUpdate(c, true, ss.cwd())
		u.Content = contentOf(c.Content, c.Output, c.Links)
		s.update(ss.id, u)
	case "plan":
		s.update(ss.id, planUpdate(it.Entries))
	case "mode":
		s.update(ss.id, CurrentModeUpdate{SessionUpdate: UpdateCurrentMode, CurrentModeID: string(modeOf(it.Mode))})
	case "undo":
		if it.Undo != nil {
			s.update(ss.id, ContentChunk{SessionUpdate: UpdateAgentMessage, Content: TextBlock(agent.UndoText(*it.Undo))})
		}
	case "rollback":
		if it.Rollback != nil {
			s.update(ss.id, ContentChunk{SessionUpdate: UpdateAgentMessage, Content: TextBlock(agent.RollbackText(*it.Rollback))})
		}
	case "turn":
		if it.Error != "" {
			level := "warning" // stopped at the call limit or cancelled: as the person chose
			if it.Status == agent.TurnFailed {
				level = "error"
			}
			s.notice(ss.id, level, "turn "+it.Status+": "+it.Error)
		}
	}
}
