package acp

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/permission"
	kinsession "github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/rpc"
)

// session is what the ACP front end keeps of a session it opened on this
// connection (session/new, session/load, session/resume).
type session struct {
	id    string
	roots []string // cwd first

	// mu guards the fields below.
	mu sync.Mutex
	// reported holds the tool calls the client was told about: a call's
	// first report is a tool_call, later ones tool_call_updates.
	reported map[string]bool
	// streams is the output of running calls, sent throttled.
	streams map[string]*outputStream
	// done receives the running turn's end (nil when no prompt waits).
	done   chan agent.TurnDone
	turnID string
	// promptEnded is closed when the prompt that set done has answered
	// (session/close waits for it: the prompt must hear its turn's end
	// before the session is forgotten).
	promptEnded chan struct{}
	// closed is set by session/close: no prompt starts on the session
	// any more.
	closed bool
	// stopped is set by a session/cancel that came before the prompt's
	// turn started (while its MCP servers started).
	stopped bool
	// stopStart ends the prompt's wait for the MCP servers to start (set
	// while a prompt runs): a session/cancel before its turn began stops
	// the wait, also for servers another session's prompt is starting.
	stopStart context.CancelFunc
	// preparing are the cancels of the prompts still reading their
	// attachments (a resource_link may wait for the MCP servers to
	// start), by a number of their own: a session/cancel stops them.
	preparing map[uint64]context.CancelFunc
	prepSeq   uint64
	title     string
	// mode is the session's mode as kin last said (kin runs the session
	// for this connection alone, so nothing else changes it).
	mode permission.Mode
	// model and effort are the session's choice as kin last said ("" effort:
	// the model's default).
	model, effort string
	// mcp runs the servers the client passed for this session (nil: none),
	// servers are those servers as kin took them.
	mcp        *rpc.MCPServers
	servers    []config.Server
	mcpStarted bool
}

func newSession(id string, roots []string, o agent.Opened) *session {
	return &session{id: id, roots: roots, title: o.Info.Title, mode: modeOf(o.Info.Mode), model: o.Model, effort: o.Effort,
		reported: map[string]bool{}, streams: map[string]*outputStream{}}
}

// prompting reports whether a prompt's turn runs (or starts) now.
func (ss *session) prompting() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.done != nil
}

func (ss *session) cwd() string {
	if len(ss.roots) == 0 {
		return ""
	}
	return ss.roots[0]
}

func (ss *session) closeMCP() {
	ss.mu.Lock()
	m := ss.mcp
	ss.mcp = nil
	ss.mu.Unlock()
	if m != nil {
		m.Close()
	}
}

// lookup returns a session open on this connection.
func (s *Server) lookup(id string) (*session, error) {
	if id == "" {
		return nil, invalid("invalid params: sessionId is required")
	}
	s.mu.Lock()
	ss := s.sessions[id]
	s.mu.Unlock()
	if ss == nil {
		return nil, &jsonrpc2.Error{Code: CodeResourceNotFound, Message: "kin: session " + id + " is not open on this connection; call session/load (or session/resume) first"}
	}
	return ss, nil
}

func (s *Server) remember(ss *session) {
	s.mu.Lock()
	old := s.sessions[ss.id]
	s.sessions[ss.id] = ss
	s.mu.Unlock()
	if old != nil && old != ss {
		old.closeMCP()
	}
}

func (s *Server) forget(id string) {
	s.mu.Lock()
	ss := s.sessions[id]
	delete(s.sessions, id)
	s.mu.Unlock()
	if ss != nil {
		ss.closeMCP()
	}
}

// rootsOf are a session's folders: cwd and the additional directories,
// absolute existing directories with symlinks resolved as kin serve's
// session/new takes them (rpc.SessionRoots), each once.
func rootsOf(cwd string, extra []string) ([]string, error) {
	all, err := rpc.SessionRoots(cwd, extra)
	if err != nil {
		return nil, err
	}
	var roots []string
	for _, dir := range all {
		if !slices.Contains(roots, dir) {
			roots = append(roots, dir)
		}
	}
	return roots, nil
}

func handleSessionNew(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p NewSessionRequest
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	roots, err := rootsOf(p.Cwd, p.AdditionalDirectories)
	if err != nil {
		return nil, err
	}
	servers, err := s.clientServers(p.MCPServers)
	if err != nil {
		return nil, err
	}
	if err := s.ensureModel(); err != nil {
		return nil, err
	}
	wt, err := worktreeMeta(p.Meta)
	if err != nil {
		return nil, err
	}
	svc, _ := s.service()
	opened, err := svc.NewSession(agent.SessionOptions{Roots: roots, Worktree: wt})
	if err != nil {
		return nil, err
	}
	info := opened.Info
	if wt != nil {
		roots = append([]string{info.Cwd}, info.AdditionalDirectories...) // the worktree's
	}
	ss := newSession(info.SessionID, roots, opened)
	s.attachMCP(ss, servers)
	s.remember(ss)
	s.log.Info("session created", zap.String("session", info.SessionID), zap.Strings("roots", roots), zap.Int("mcpServers", len(servers)))
	return s.opened(ss, NewSessionResponse{SessionID: info.SessionID, Modes: modeState(ss), Models: s.modelState(ss), ConfigOptions: s.configOptions(ss),
		Meta: worktreeAnswer(svc, info.SessionID)}), nil
}

// loadPage is how many history items a load reads at a time.
const loadPage = 1000

// open opens a stored session for load and resume: its recorded roots
// (the client's cwd serves a session recorded before sessions kept them)
// and the client's MCP servers.
func (s *Server) open(p LoadSessionRequest, page int) (*session, agent.Resumed, error) {
	if p.SessionID == "" {
		return nil, agent.Resumed{}, invalid("invalid params: sessionId is required")
	}
	roots, err := rootsOf(p.Cwd, p.AdditionalDirectories)
	if err != nil {
		return nil, agent.Resumed{}, err
	}
	servers, err := s.clientServers(p.MCPServers)
	if err != nil {
		return nil, agent.Resumed{}, err
	}
	svc, _ := s.service()
	// The resume may go on following tasks a stopped kin left (agent's
	// followTasks): a task that ended meanwhile ends at once. Its call's
	// updates wait for the answer (the dispatcher releases the hold once
	// it is written, see the routes), so none is dropped for a session not
	// remembered yet, nor comes before session/load's replay of its call.
	s.disp.Hold(rpc.SessionKey(p.SessionID), heldToolCalls)
	res, err := svc.Resume(p.SessionID, agent.ResumeOptions{Limit: page, DefaultRoots: roots})
	if err != nil {
		return nil, agent.Resumed{}, err
	}
	if r := res.Info; r.Cwd != "" {
		roots = append([]string{r.Cwd}, r.AdditionalDirectories...)
	}
	s.mu.Lock()
	ss := s.sessions[p.SessionID]
	s.mu.Unlock()
	if ss != nil {
		// Open here already (a client that reloads): its turn, its calls
		// and its servers go on as they are.
		return ss, res, nil
	}
	ss = newSession(p.SessionID, roots, res.Opened)
	s.attachMCP(ss, servers)
	s.remember(ss)
	return ss, res, nil
}

func readOnlyMeta(res agent.Resumed) Meta {
	m := map[string]any{}
	if res.ReadOnly != nil {
		m["readOnly"] = res.ReadOnly.Error()
	}
	if res.RunningTurnID != "" {
		m["runningTurnId"] = res.RunningTurnID
	}
	if len(m) == 0 {
		return nil
	}
	return Meta{"kin": m}
}

// handleSessionLoad replays the whole conversation as session/updates,
// oldest first, then asks again what is still pending, then answers {}
// (the schema's LoadSessionResponse; kin's notes go in _meta).
func handleSessionLoad(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p LoadSessionRequest
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	ss, res, err := s.open(p, loadPage)
	if err != nil {
		return nil, err
	}
	svc, _ := s.service()
	pages := [][]kinsession.HistoryItem{res.History}
	for cursor := res.Cursor; cursor != ""; {
		older, err := svc.Resume(p.SessionID, agent.ResumeOptions{Limit: loadPage, Before: cursor, DefaultRoots: ss.roots})
		if err != nil {
			return nil, err
		}
		pages = append(pages, older.History)
		cursor = older.Cursor
	}
	for i := len(pages) - 1; i >= 0; i-- {
		for _, it := range pages[i] {
			s.replay(ss, it)
		}
	}
	for _, q := range s.broker().Pending(p.SessionID) {
		if q.SessionID != p.SessionID && q.Of(p.SessionID) {
			// A subagent's question, kept under the subagent's session:
			// asked again as it was first asked, in this session (its
			// card included, which the replay does not carry).
			asker{s}.Asked(q)
			continue
		}
		if q.SessionID == "" && s.askingSession() == p.SessionID {
			// A configured server's launch, asked in this session (its
			// prompt waits for it): asked again here, card included.
			asker{s}.Asked(q)
			continue
		}
		if q.SessionID != p.SessionID {
			continue // a question of no session asked in another session: asked where it was
		}
		if b, ok := q.Body.(permission.Request); ok {
			b.RequestID = q.ID
			q.Body = b
			if _, synthetic := permissionToolCallID(b); synthetic {
				// Its card, which the replay does not carry either: the
				// request is about it.
				s.update(p.SessionID, syntheticToolCall(b))
			}
		}
		s.reask(q)
	}
	return s.reopened(ss, res), nil
}

// loaded is session/load's and session/resume's answer: the session's
// modes and settings (kin's notes in _meta).
func (s *Server) loaded(ss *session, res agent.Resumed) LoadSessionResponse {
	return LoadSessionResponse{Modes: modeState(ss), Models: s.modelState(ss), ConfigOptions: s.configOptions(ss), Meta: readOnlyMeta(res)}
}

// reopened is opened for a session/load or session/resume, which may go
// on following tasks a stopped kin left: kin acp starts the configured
// servers at a session's first prompt, and a followed task waits for its
// server (up to 2 minutes, then its call ends unknown), so they start
// once the answer is out.
func (s *Server) reopened(ss *session, res agent.Resumed) thenNotify {
	out := s.opened(ss, s.loaded(ss, res))
	if !res.Following {
		return out
	}
	told := out.after
	out.after = func() {
		told()
		go s.startMCP(context.Background(), ss)
	}
	return out
}

// opened answers a request that opened a session, then tells the client
// the commands the session offers.
func (s *Server) opened(ss *session, res any) thenNotify {
	return thenNotify{result: res, after: func() { s.commandsChanged(ss) }}
}

// handleSessionResume opens a session without replaying it.
func handleSessionResume(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p LoadSessionRequest
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	ss, res, err := s.open(p, 1)
	if err != nil {
		return nil, err
	}
	return s.reopened(ss, res), nil
}

// listPage is how many sessions one session/list answer holds.
const listPage = 100

func handleSessionList(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p ListSessionsRequest
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	cwd := ""
	if p.Cwd != "" {
		cwd = filepath.Clean(p.Cwd)
		if real, err := filepath.EvalSymlinks(cwd); err == nil {
			cwd = real
		}
	}
	svc, _ := s.service()
	all, err := svc.ListSessions()
	if err != nil {
		return nil, err
	}
	// A page goes on after the last row of the one before (kin serve's
	// cursor), not after a count of rows: a session made or deleted
	// meanwhile neither repeats a row nor hides one.
	start, ok := rpc.ListStart(all, p.Cursor)
	if !ok {
		return nil, invalid("invalid params: cursor %q is not one kin handed out", p.Cursor)
	}
	out := ListSessionsResponse{Sessions: []SessionInfo{}}
	var last *kinsession.Info
	for i := start; i < len(all); i++ {
		in := &all[i]
		if in.ParentID != "" {
			continue // a subagent's: the client lists the sessions it can prompt
		}
		row := SessionInfo{SessionID: in.SessionID, Cwd: in.Cwd, AdditionalDirectories: in.AdditionalDirectories, Title: in.Title}
		if in.Origin != "" { // made by a one-shot or piped kin chat, not a person's conversation
			row.Meta = Meta{"kin": map[string]any{"origin": in.Origin}}
		}
		if row.Cwd == "" {
			row.Cwd = s.opts.Cwd // recorded before sessions kept their folders
		}
		if !in.UpdatedAt.IsZero() {
			row.UpdatedAt = in.UpdatedAt.UTC().Format("2006-01-02T15:04:05Z07:00")
		}
		if cwd != "" && row.Cwd != cwd {
			continue
		}
		if len(out.Sessions) == listPage {
			out.NextCursor = rpc.ListCursor(last)
			break
		}
		out.Sessions = append(out.Sessions, row)
		last = in
	}
	return out, nil
}

// handleSessionClose stops what runs on the session as session/cancel
// does ("The Agent MUST cancel any ongoing work for that session as if
// session/cancel had been called, then free the resources"): a running
// prompt is answered cancelled before the session is forgotten (the turn's
// end reaches it only while the session is known here), then its MCP
// servers stop. No prompt starts on it afterwards.
func handleSessionClose(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p SessionIDRequest
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	ss, err := s.lookup(p.SessionID)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	ss.closed = true
	ended := ss.promptEnded
	ss.mu.Unlock()
	s.cancelTurn(p.SessionID)
	if ended != nil {
		<-ended
	}
	s.forget(p.SessionID)
	// Its log too: another kin (an editor, kin chat) may take it now.
	if svc, _ := s.service(); svc != nil {
		svc.Release(p.SessionID)
	}
	return Empty{}, nil
}

// handleSessionDelete removes a session from kin's sessions. Deleting one
// that never existed or is gone already succeeds, as ACP's session/delete
// says it SHOULD ("Deleting an already-deleted session, or a session that
// never existed, SHOULD succeed silently"); one with a running turn, or
// open in another kin, is refused.
func handleSessionDelete(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p SessionIDRequest
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.SessionID == "" {
		return nil, invalid("invalid params: sessionId is required")
	}
	svc, _ := s.service()
	if err := svc.DeleteSession(p.SessionID); err != nil && !errors.Is(err, agent.ErrSessionNotFound) {
		return nil, err
	}
	s.forget(p.SessionID)
	return Empty{}, nil
}
