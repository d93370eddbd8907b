package acp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"
	"github.com/tidwall/gjson"
	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/ask"
	"github.com/kin-dev/kin/agent/builtin"
	kinsession "github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/rpc"
)

// maxAttachment bounds one file or resource put into a question.
const maxAttachment = 256 << 10

// handleSessionPrompt runs one turn: it answers {stopReason} when the turn
// ends (end_turn, cancelled, max_turn_requests for kin's call limit), or a
// JSON-RPC error carrying kin's message when it failed. Every update of
// the turn is sent before the answer. A prompt that is a /command runs it
// (see runCommand): kin's own answer at once (end_turn), an MCP prompt's
// text as the turn's question.
func handleSessionPrompt(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	return sessionPrompt(ctx, s, params, s.cancelsRead(params))
}

// sessionPrompt is handleSessionPrompt for a prompt read when the
// session's session/cancels numbered seen: one more since then means the
// client stopped it before its turn began (while its attachments were read
// through the client, or it waited for the requests before it), and it
// answers cancelled without asking the model.
func sessionPrompt(ctx context.Context, s *Server, params json.RawMessage, seen uint64) (any, error) {
	var p PromptRequest
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	ss, err := s.lookup(p.SessionID)
	if err != nil {
		return nil, err
	}
	if err := s.ensureModel(); err != nil {
		return nil, err
	}
	svc, _ := s.service()
	var in agent.Input
	var rv *agent.Review
	if cmd, isCommand, unescaped := command(p.Prompt); isCommand {
		name, ask, review, err := s.runCommand(ctx, ss, cmd, p.Prompt)
		if err != nil {
			return s.stoppedOr(ctx, ss, seen, err)
		}
		rv = review
		if ask == "" && rv == nil { // kin's own command: answered, no turn
			return PromptResponse{StopReason: StopEndTurn, Meta: Meta{"kin": map[string]any{"command": name}}}, nil
		}
		in = agent.TextInput(ask)
	} else {
		if unescaped != "" {
			p.Prompt[0], _ = json.Marshal(TextBlock(unescaped))
		}
		prepCtx, endPrep := s.preparing(ctx, ss)
		in, err = s.promptInput(prepCtx, ss, p.Prompt)
		endPrep()
		if err != nil {
			return s.stoppedOr(ctx, ss, seen, err)
		}
	}
	done := make(chan agent.TurnDone, 1)
	ended := make(chan struct{})
	defer close(ended)
	startCtx, stopStart := context.WithCancel(ctx)
	defer stopStart()
	cancelled := s.cancelsOf(ss.id) != seen // not under ss.mu: s.mu is never taken inside it
	ss.mu.Lock()
	busy, closed := ss.done != nil, ss.closed
	if !busy && !closed && !cancelled {
		ss.done, ss.stopped, ss.promptEnded, ss.stopStart = done, false, ended, stopStart
	}
	ss.mu.Unlock()
	switch {
	case closed:
		return nil, &jsonrpc2.Error{Code: CodeResourceNotFound, Message: "kin: session " + ss.id + " was closed on this connection; call session/load (or session/resume) to open it again"}
	case cancelled:
		return PromptResponse{StopReason: StopCancelled}, nil
	case busy:
		return nil, errPromptRunning
	}
	// A $/cancel_request while the servers start stops the prompt as a
	// session/cancel does (cancelTurn).
	stopWaiting := context.AfterFunc(ctx, func() { s.refuseStarting(ss.id) })
	s.startMCP(startCtx, ss)
	stopWaiting()
	// The turn id is known only once StartTurn returns, and the turn may
	// end first: TurnDone waits for it under ss.mu. A session/cancel that
	// came while the servers started stops the prompt before its turn.
	cancelled = s.cancelsOf(ss.id) != seen // a cancel after this read finds the turn starting (cancelTurn)
	ss.mu.Lock()
	if ss.stopped || cancelled || ctx.Err() != nil {
		ss.done = nil
		ss.mu.Unlock()
		return PromptResponse{StopReason: StopCancelled}, nil
	}
	var turnID string
	if rv != nil {
		turnID, err = svc.StartReview(rv, ss.roots)
	} else {
		turnID, err = svc.StartTurn(ss.id, in, ss.roots)
	}
	if err != nil {
		ss.done = nil
		ss.mu.Unlock()
		return nil, err
	}
	ss.turnID = turnID
	ss.mu.Unlock()

	var end agent.TurnDone
	select {
	case end = <-done:
	case <-ctx.Done(): // $/cancel_request: stop the turn, answer how it ended
		svc.CancelTurn(ss.id)
		end = <-done
	}
	switch end.Status {
	case agent.TurnCompleted:
		return PromptResponse{StopReason: StopEndTurn}, nil
	case agent.TurnCancelled:
		return PromptResponse{StopReason: StopCancelled, Meta: errMeta(end.Error)}, nil
	case agent.TurnLimit:
		return PromptResponse{StopReason: StopMaxTurnRequests, Meta: errMeta(end.Error)}, nil
	case agent.TurnRefused:
		return PromptResponse{StopReason: StopRefusal}, nil
	}
	return nil, &jsonrpc2.Error{Code: rpc.CodeInternalError, Message: end.Error}
}

// stoppedOr is a prompt's answer when preparing it failed: cancelled when
// the client stopped it meanwhile (a session/cancel read after it, or its
// $/cancel_request: what failed, a read through the client, say, failed
// because of that), else the error.
func (s *Server) stoppedOr(ctx context.Context, ss *session, seen uint64, err error) (any, error) {
	if ctx.Err() != nil || s.cancelsOf(ss.id) != seen {
		return PromptResponse{StopReason: StopCancelled}, nil
	}
	return nil, err
}

func errMeta(msg string) Meta {
	if msg == "" {
		return nil
	}
	return Meta{"kin": map[string]any{"message": msg}}
}

// cancelsRead is how many session/cancels were read so far for the
// session a prompt's params name. Called on the read loop, as countCancel
// is, so the order of the two is the order the client sent them in.
func (s *Server) cancelsRead(params json.RawMessage) uint64 {
	return s.cancelsOf(gjson.GetBytes(params, "sessionId").String())
}

func (s *Server) cancelsOf(sessionID string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancels[sessionID]
}

// countCancel notes a session/cancel read for a session open here (one
// for any other id is not kept: it cancels nothing, and a client's made-up
// ids must not grow the table).
func (s *Server) countCancel(sessionID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions[sessionID] != nil {
		s.cancels[sessionID]++
	}
}

// cancelTurn is session/cancel: the turn stops exactly as with turn/cancel
// (running commands killed, pending approvals denied), and its prompt
// answers cancelled.
func (s *Server) cancelTurn(sessionID string) {
	svc, _ := s.service()
	if svc == nil {
		return
	}
	s.mu.Lock()
	ss := s.sessions[sessionID]
	s.mu.Unlock()
	if ss != nil {
		ss.mu.Lock()
		starting := ss.done != nil && ss.turnID == "" // a prompt still starting its servers
		ss.stopped = ss.stopped || starting
		stopStart := ss.stopStart
		var preps []context.CancelFunc
		for _, stop := range ss.preparing {
			preps = append(preps, stop)
		}
		ss.mu.Unlock()
		if starting || len(preps) > 0 {
			s.refuseStarting(sessionID)
		}
		if starting && stopStart != nil {
			stopStart() // and its wait for another session's, which go on starting
		}
		for _, stop := range preps {
			stop() // a prompt reading its attachments
		}
	}
	if svc.CancelTurn(sessionID) {
		s.log.Info("turn cancelled by the client", zap.String("session", sessionID))
	}
}

// preparing is the context a prompt reads its attachments under: a
// session/cancel ends it (cancelTurn), as the client's $/cancel_request
// ends ctx. end forgets it.
func (s *Server) preparing(ctx context.Context, ss *session) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	ss.mu.Lock()
	ss.prepSeq++
	n := ss.prepSeq
	if ss.preparing == nil {
		ss.preparing = map[uint64]context.CancelFunc{}
	}
	ss.preparing[n] = cancel
	ss.mu.Unlock()
	return ctx, func() {
		ss.mu.Lock()
		delete(ss.preparing, n)
		ss.mu.Unlock()
		cancel()
	}
}

// refuseStarting refuses what the servers a stopped prompt was starting
// ask in its session: the session's own servers' questions, and the
// configured servers' launches (questions of no session, asked in the
// session whose prompt starts them), which the prompt waits for too. A
// client that does not answer them cancelled itself (nor the person) left
// the prompt, and a session/close waiting for it, unanswered.
func (s *Server) refuseStarting(sessionID string) {
	b := s.broker()
	b.RefuseAll(sessionID, ask.ReasonCancelled)
	if s.askingSession() != sessionID {
		return
	}
	for _, q := range b.Pending(sessionID) {
		if q.SessionID == "" {
			b.Refuse(q.ID, ask.ReasonCancelled)
		}
	}
}

// promptInput turns a prompt's content blocks into the question kin asks
// the model. Text is kept as written; a file:// link is read by kin under
// its path rules (inside the session's folders, the client's buffer
// first); an embedded resource is put in as it came; an image goes to the
// model as an image (input_image), in its place among the texts. A block
// kin cannot pass on is refused, naming it: nothing is dropped silently.
func (s *Server) promptInput(ctx context.Context, ss *session, blocks []json.RawMessage) (agent.Input, error) {
	if len(blocks) == 0 {
		return agent.Input{}, invalid("invalid params: prompt is empty")
	}
	svc, _ := s.service()
	var b strings.Builder
	// parts are the question's parts once an image comes: the text so
	// far, then the image, and so on.
	var parts []agent.Part
	sep := func() {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
	}
	// attached counts what the attachments put in; past what one question
	// holds (kinsession.MaxText: the rest would be cut when recorded) the
	// prompt is refused at once and nothing more is read, however many
	// blocks link files.
	attached := 0
	tooMuch := func(i int, what string, n int) error {
		if attached += n; attached <= kinsession.MaxText {
			return nil
		}
		return invalid("invalid params: prompt[%d] (%s): the attachments are more than kin takes in one prompt (%d bytes in all); attach fewer, or ask for the files to be read", i, what, kinsession.MaxText)
	}
	for i, raw := range blocks {
		var c ContentBlock
		if err := json.Unmarshal(raw, &c); err != nil {
			return agent.Input{}, invalid("invalid params: prompt[%d]: %v", i, err)
		}
		switch c.Type {
		case contentTypeText:
			sep()
			b.WriteString(c.Text)
		case contentTypeResourceRef:
			path, ok := rpc.FileURIPath(c.URI)
			if !ok {
				// A URI a connected MCP server offers is read from
				// it, under its rules (resources.go); any other
				// stays a link.
				text, server, err := s.serverResource(ctx, ss, c.URI)
				if err != nil {
					return agent.Input{}, invalid("invalid params: prompt[%d] (resource_link %s): %v", i, c.URI, err)
				}
				if err := tooMuch(i, "resource_link "+c.URI, len(text)); err != nil {
					return agent.Input{}, err
				}
				sep()
				if server == "" {
					fmt.Fprintf(&b, "[link: %s](%s)", linkName(c), c.URI)
				} else {
					attach(&b, server+":"+c.URI, text)
				}
				continue
			}
			env := tool.Env{SessionID: ss.id, Roots: ss.roots, Files: svc.Files(ss.id), KinHome: s.opts.Home}
			data, disp, err := builtin.ReadAttachment(ctx, env, path, maxAttachment)
			if err != nil {
				return agent.Input{}, invalid("invalid params: prompt[%d] (resource_link %s): %v", i, c.URI, err)
			}
			if !utf8.Valid(data) {
				return agent.Input{}, invalid("invalid params: prompt[%d] (resource_link %s): not a text file", i, c.URI)
			}
			if err := tooMuch(i, "resource_link "+c.URI, len(data)); err != nil {
				return agent.Input{}, err
			}
			sep()
			attach(&b, disp, string(data))
		case contentTypeResource:
			r := c.Resource
			if r == nil {
				return agent.Input{}, invalid("invalid params: prompt[%d]: a resource block needs its resource", i)
			}
			name := r.URI
			if p, ok := rpc.FileURIPath(r.URI); ok {
				name = p
			}
			switch {
			case r.Text != nil:
				if len(*r.Text) > maxAttachment {
					return agent.Input{}, invalid("invalid params: prompt[%d] (resource %s): over %d bytes", i, r.URI, maxAttachment)
				}
				if err := tooMuch(i, "resource "+r.URI, len(*r.Text)); err != nil {
					return agent.Input{}, err
				}
				sep()
				attach(&b, name, *r.Text)
			case r.Blob != nil:
				data, err := base64.StdEncoding.DecodeString(*r.Blob)
				if err != nil || !utf8.Valid(data) || len(data) > maxAttachment {
					return agent.Input{}, invalid("invalid params: prompt[%d] (resource %s): kin takes text resources only (this one is binary, or over %d bytes)", i, r.URI, maxAttachment)
				}
				if err := tooMuch(i, "resource "+r.URI, len(data)); err != nil {
					return agent.Input{}, err
				}
				sep()
				attach(&b, name, string(data))
			default:
				return agent.Input{}, invalid("invalid params: prompt[%d] (resource %s): neither text nor blob", i, r.URI)
			}
		case contentTypeImage:
			if err := s.checkImage(ss, c); err != nil {
				return agent.Input{}, invalid("invalid params: prompt[%d] (image): %v", i, err)
			}
			if b.Len() > 0 {
				parts = append(parts, agent.Part{Type: "text", Text: b.String()})
				b.Reset()
			}
			parts = append(parts, agent.Part{Type: "image", MimeType: c.MimeType, Data: c.Data})
		default:
			return agent.Input{}, invalid("invalid params: prompt[%d]: %q blocks are not supported (kin takes text, resource_link, resource and image)", i, c.Type)
		}
	}
	if parts != nil {
		if b.Len() > 0 {
			parts = append(parts, agent.Part{Type: "text", Text: b.String()})
		}
		return agent.Input{Parts: parts}, nil
	}
	if strings.TrimSpace(b.String()) == "" {
		return agent.Input{}, invalid("invalid params: prompt has no text")
	}
	return agent.TextInput(b.String()), nil
}

// checkImage refuses an image the session's model cannot be sent (the
// service checks again; here the error names the prompt's block).
func (s *Server) checkImage(ss *session, c ContentBlock) error {
	svc, _ := s.service()
	cat := svc.Models()
	ss.mu.Lock()
	id := ss.model
	ss.mu.Unlock()
	m, ok := cat.Find(id)
	if !ok {
		m = cat.DefaultConfig()
	}
	switch {
	case m.NoImages:
		return fmt.Errorf("the model %s does not take images (choose another with the model option)", m.Model)
	case !slices.Contains(agent.ImageTypes, c.MimeType):
		return fmt.Errorf("mimeType %q is not one kin sends (%s)", c.MimeType, strings.Join(agent.ImageTypes, ", "))
	case c.Data == "":
		return fmt.Errorf("data is empty")
	}
	if _, err := base64.StdEncoding.DecodeString(c.Data); err != nil {
		return fmt.Errorf("data is not base64 (%v)", err)
	}
	return nil
}

// attach puts a file's content into the question, fenced so that the
// model tells it from the person's words.
func attach(b *strings.Builder, name, text string) {
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	fmt.Fprintf(b, "File %s:\n%s\n%s", name, fence, text)
	if !strings.HasSuffix(text, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(fence)
}

func linkName(c ContentBlock) string {
	if c.Title != "" {
		return c.Title
	}
	return c.Name
}
