package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/sourcegraph/jsonrpc2"
	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/ask"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/rpc"
)

// Options configure a Server: kin serve's, since kin acp runs the same
// agent with the same tools, sandbox and MCP servers.
type Options struct {
	rpc.Options
}

// connState is where a connection is in its lifecycle.
type connState int

const (
	stateCreated connState = iota
	stateInitialized
	stateClosed
)

func (s connState) String() string {
	switch s {
	case stateCreated:
		return "created"
	case stateInitialized:
		return "initialized"
	case stateClosed:
		return "closed"
	}
	return fmt.Sprintf("connState(%d)", int(s))
}

// Server serves one ACP client connection.
type Server struct {
	opts  Options
	log   *zap.Logger
	seq   atomic.Uint64 // ids of kin's requests to the client
	waits askTable      // requests to the client it has not answered
	urls  urlElicits    // URL-mode elicitations whose completion may come

	// disp runs requests off the read loop by kin serve's rules
	// (rpc.Dispatcher): in arrival order per session, bulk reads sharing
	// all processors but one.
	disp *rpc.Dispatcher

	// mu guards state, conn, caps, svc, gate, asks, mcp,
	// modelConfigured, launching, mcpStarted, sessions and cancels.
	mu    sync.Mutex
	state connState
	conn  *jsonrpc2.Conn
	caps  ClientCapabilities
	svc   *agent.Service
	gate  *permission.Gate
	// asks is every question to the person (the gate's approvals, MCP
	// servers' questions): one broker, as in kin serve.
	asks *ask.Broker
	mcp  *rpc.MCPServers
	// modelConfigured says whether svc was built with a model service
	// (see ensureModel).
	modelConfigured bool
	// launching is the session whose prompt is starting the configured
	// MCP servers: their launch approvals are asked there.
	launching  string
	mcpStarted chan struct{} // closed once the configured servers settled
	sessions   map[string]*session
	// cancels counts the session/cancels read for each session opened on
	// this connection (kept when it closes: a prompt read before a close
	// and a load may run after them): a prompt notes its session's count
	// when it is read, and a later count means the client cancelled it
	// before its turn began (see cancelsRead).
	cancels map[string]uint64
}

// Serve runs the protocol on rwc until the stream closes or ctx ends, then
// stops every turn (denying what they wait for), every MCP server and
// every session log. It returns the process exit code.
func Serve(ctx context.Context, rwc io.ReadWriteCloser, opts Options) int {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	s := &Server{opts: opts, log: opts.Logger, sessions: map[string]*session{}, cancels: map[string]uint64{}}
	s.disp = rpc.NewDispatcher(func(id jsonrpc2.ID, res any, err error) {
		then, ok := res.(thenNotify)
		if ok {
			res = then.result
		}
		s.reply(s.connection(), id, res, err)
		if ok && err == nil {
			then.after()
		}
	}, errClosed)
	st := newStream(rwc, func(err error) { s.log.Warn(rpc.BadInput(err, "skipped a bad line"), zap.Error(err)) }, s.clientGone)
	connOpts := []jsonrpc2.ConnOpt{jsonrpc2.SetLogger(rpc.ZapLogger{Log: s.log})}
	if opts.Trace != nil {
		connOpts = append(connOpts, rpc.TraceOpts(opts.Trace, fileContent)...)
	}
	conn := st.NewConn(ctx, s, connOpts...)
	s.mu.Lock()
	s.conn = conn
	s.mu.Unlock()
	select {
	case <-conn.DisconnectNotify():
	case <-ctx.Done():
		conn.Close()
	}
	s.teardown(permission.ReasonDisconnected)
	return 0
}

// fileContent says which messages carry the content of the person's
// files, kept out of the trace: what kin reads and writes through the
// client, and what a prompt embeds.
func fileContent(req *jsonrpc2.Request) bool {
	if req == nil {
		return false
	}
	switch req.Method {
	case MethodReadTextFile, MethodWriteTextFile, MethodSessionPrompt:
		return true
	}
	return false
}

// clientGone is called when a write failed: nothing kin sends can arrive,
// so the connection closes as for a closed stdin.
func (s *Server) clientGone(err error) {
	s.log.Warn("the client stopped reading; closing the connection", zap.Error(err))
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn != nil {
		go conn.Close() // not on the writer's goroutine: it holds jsonrpc2's send lock
	}
}

func (s *Server) teardown(reason string) {
	s.mu.Lock()
	s.state = stateClosed
	svc, broker, mcp := s.svc, s.asks, s.mcp
	var sessions []*session
	for _, ss := range s.sessions {
		sessions = append(sessions, ss)
	}
	s.mu.Unlock()
	s.disp.Stop()
	if svc != nil {
		svc.Stopping() // before the questions are withdrawn: see Service.Stopping
	}
	if broker != nil {
		broker.Close(reason)
	}
	s.disp.Wait()
	if svc != nil {
		svc.Shutdown()
	}
	for _, ss := range sessions {
		ss.closeMCP()
	}
	if mcp != nil {
		mcp.Close()
	}
}

// route is one method in the dispatch table and where it runs.
type route struct {
	handle     func(ctx context.Context, s *Server, params json.RawMessage) (any, error)
	beforeInit bool
	// onLoop requests run on the read loop (their answer written from
	// another goroutine): only initialize, which every later message
	// depends on. Everything else goes through the dispatcher.
	onLoop bool
	// run is how the dispatcher runs it: its rules (Handle is set per
	// request, from handle).
	run rpc.Route
}

// routes: requests naming a session run in arrival order on it; a prompt
// waits for the ones before it but nothing waits for the prompt (it lasts
// the whole turn, while set_mode or close must get through), and a
// $/cancel_request ends its turn and it answers stopReason cancelled;
// reads of many records share the bulk workers.
var routes = map[string]route{
	MethodInitialize:       {handle: handleInitialize, beforeInit: true, onLoop: true},
	MethodAuthenticate:     {handle: handleAuthenticate, run: rpc.Route{Order: rpc.InGroup("auth")}},
	MethodLogout:           {handle: handleLogout, run: rpc.Route{Order: rpc.InGroup("auth")}},
	MethodSessionNew:       {handle: handleSessionNew},
	MethodSessionLoad:      {handle: handleSessionLoad, run: rpc.Route{Order: rpc.BySession, Bulk: true, Before: heldToolCalls}},
	MethodSessionResume:    {handle: handleSessionResume, run: rpc.Route{Order: rpc.BySession, Bulk: true, Before: heldToolCalls}},
	MethodSessionList:      {handle: handleSessionList, run: rpc.Route{Cancellable: true, Bulk: true}},
	MethodSessionClose:     {handle: handleSessionClose, run: rpc.Route{Order: rpc.BySession}},
	MethodSessionDelete:    {handle: handleSessionDelete, run: rpc.Route{Order: rpc.BySession}},
	MethodSessionFork:      {handle: handleSessionFork, run: rpc.Route{Order: rpc.BySession}},
	MethodSessionPrompt:    {handle: handleSessionPrompt, run: rpc.Route{Order: rpc.BySession, StartsInOrder: true, AnswersCancel: true}},
	MethodSessionSetMode:   {handle: handleSetMode, run: rpc.Route{Order: rpc.BySession}},
	MethodSessionSetConfig: {handle: handleSetConfigOption, run: rpc.Route{Order: rpc.BySession}},
	MethodSessionSetModel:  {handle: handleSetModel, run: rpc.Route{Order: rpc.BySession}},
}

// heldToolCalls is what session/load and session/resume hold on their
// session (rpc.Dispatcher.Hold) until they are answered: the session's
// tool_call and tool_call_updates (events.ToolCall waits; the replay's
// updates, sent by the handler, do not). A follow of a task a stopped kin
// left may report at once.
const heldToolCalls = NotifySessionUpdate + " tool_call"

// errPromptRunning is agent.ErrTurnRunning in ACP's words: kin's own names
// kin serve's turn/completed, which no ACP client knows.
var errPromptRunning = &jsonrpc2.Error{Code: rpc.CodeInvalidRequest,
	Message: "kin is still working on a prompt in this session; cancel it (session/cancel) or wait for its answer, then try again"}

var errClosed = &jsonrpc2.Error{Code: rpc.CodeInvalidRequest, Message: "kin: the connection is closing"}

// Handle implements jsonrpc2.Handler, inline in jsonrpc2's read loop: it
// checks the lifecycle and hands the request on. Nothing here waits on the
// client, the disk or the model, nor writes to the client (a write can
// block until the client reads, while the client may be blocked writing
// to kin): every answer is written from another goroutine.
func (s *Server) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	s.mu.Lock()
	if s.conn == nil {
		s.conn = conn
	}
	state := s.state
	s.mu.Unlock()
	params := json.RawMessage("{}")
	if req.Params != nil && string(*req.Params) != "null" {
		params = *req.Params
	}
	if req.Notif {
		s.handleNotification(req.Method, params)
		return
	}
	r, ok := routes[req.Method]
	switch {
	case !ok:
		go s.replyErr(conn, req.ID, &jsonrpc2.Error{Code: rpc.CodeMethodNotFound, Message: "method not found: " + req.Method})
		return
	case state == stateCreated && !r.beforeInit:
		go s.replyErr(conn, req.ID, &jsonrpc2.Error{Code: rpc.CodeInvalidRequest, Message: "kin: send initialize first"})
		return
	case state == stateClosed:
		go s.replyErr(conn, req.ID, errClosed)
		return
	}
	if r.onLoop {
		res, err := r.handle(ctx, s, params)
		go s.reply(conn, req.ID, res, err)
		return
	}
	run := r.run
	run.Handle = func(ctx context.Context, p json.RawMessage) (any, error) { return r.handle(ctx, s, p) }
	if req.Method == MethodSessionPrompt {
		// Noted here, in arrival order: a session/cancel read after this
		// prompt stops it even if its turn has not begun yet.
		seen := s.cancelsRead(params)
		run.Handle = func(ctx context.Context, p json.RawMessage) (any, error) { return sessionPrompt(ctx, s, p, seen) }
	}
	s.disp.Dispatch(req.ID, run, params)
}

func (s *Server) handleNotification(method string, params json.RawMessage) {
	switch method {
	case NotifySessionCancel:
		var p SessionIDRequest
		if json.Unmarshal(params, &p) != nil || p.SessionID == "" {
			s.log.Warn("session/cancel without a sessionId")
			return
		}
		s.countCancel(p.SessionID)   // here, in arrival order (see cancelsRead)
		go s.cancelTurn(p.SessionID) // it waits for the turn to end
	case NotifyCancelRequest:
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(params, &p) != nil {
			return
		}
		id, err := rpc.RequestID(p.RequestID) // an id the framing aliased is named by its alias
		if err != nil {
			return
		}
		s.disp.Cancel(id)
	default:
		s.log.Debug("ignored notification", zap.String("method", method))
	}
}

func (s *Server) reply(conn *jsonrpc2.Conn, id jsonrpc2.ID, res any, err error) {
	if err != nil {
		s.replyErr(conn, id, toRPCError(err))
		return
	}
	if res == nil {
		res = Empty{}
	}
	if err := conn.Reply(context.Background(), id, res); err != nil {
		s.log.Debug("reply failed", zap.Error(err))
	}
}

func (s *Server) replyErr(conn *jsonrpc2.Conn, id jsonrpc2.ID, e *jsonrpc2.Error) {
	if err := conn.ReplyWithError(context.Background(), id, e); err != nil {
		s.log.Debug("reply failed", zap.Error(err))
	}
}

// notify sends a notification; a closed connection is not an error here.
func (s *Server) notify(method string, params any) {
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn == nil {
		return
	}
	if err := conn.Notify(context.Background(), method, params); err != nil && !errors.Is(err, jsonrpc2.ErrClosed) {
		s.log.Debug("notify failed", zap.String("method", method), zap.Error(err))
	}
}

// update sends one session/update. A message chunk with no text is never
// sent: the schema's text block needs its text (a model may stream an empty
// delta), and it would show nothing.
func (s *Server) update(sessionID string, u any) {
	if c, ok := u.(ContentChunk); ok && c.Content.Type == contentTypeText && c.Content.Text == "" {
		return
	}
	s.notify(NotifySessionUpdate, SessionNotification{SessionID: sessionID, Update: u})
}

// call sends a request to the client and waits for its answer or ctx. Its
// id names what it is for ("perm_3", "fs_7"), so a trace can tell file
// contents apart; when ctx ends first the client is told with
// $/cancel_request.
func (s *Server) call(ctx context.Context, kind, method string, params, result any) error {
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn == nil {
		return jsonrpc2.ErrClosed
	}
	id := jsonrpc2.ID{Str: fmt.Sprintf("%s_%d", kind, s.seq.Add(1)), IsString: true}
	w, err := conn.DispatchCall(context.Background(), method, params, jsonrpc2.PickID(id))
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- w.Wait(context.Background(), result) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		s.notify(NotifyCancelRequest, map[string]any{"requestId": id.Str})
		return ctx.Err()
	}
}

// thenNotify is a result whose notifications must follow the answer: the
// first updates of a new session name a session the client learns of from
// the answer (the commands it offers), so they are sent once it is out.
type thenNotify struct {
	result any
	after  func()
}

// connection is the client's connection.
func (s *Server) connection() *jsonrpc2.Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn
}

// broker is every question to the person.
func (s *Server) broker() *ask.Broker {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asks
}

// service returns the agent, which exists once initialize ran.
func (s *Server) service() (*agent.Service, *permission.Gate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.svc, s.gate
}

func (s *Server) clientCaps() ClientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

// decode unmarshals params, naming the problem for the client.
func decode(params json.RawMessage, v any) error {
	if err := json.Unmarshal(params, v); err != nil {
		return invalid("invalid params: %v", err)
	}
	return nil
}

func invalid(format string, args ...any) error {
	return &jsonrpc2.Error{Code: rpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// toRPCError maps kin's errors to ACP's codes at the boundary.
func toRPCError(err error) *jsonrpc2.Error {
	var re *jsonrpc2.Error
	var pe *agent.PartError
	switch {
	case errors.As(err, &re):
		return re
	case rpc.IsWorktreeError(err):
		re, _ := rpc.WorktreeError(err)
		return re
	case errors.As(err, &pe): // a question's part the service refused
		return &jsonrpc2.Error{Code: rpc.CodeInvalidParams, Message: err.Error()}
	case errors.Is(err, agent.ErrSessionNotFound):
		return &jsonrpc2.Error{Code: CodeResourceNotFound, Message: err.Error()}
	case errors.Is(err, agent.ErrNotConfigured):
		return &jsonrpc2.Error{Code: CodeAuthRequired, Message: err.Error()}
	case errors.Is(err, agent.ErrBadCursor), errors.Is(err, agent.ErrBadParams), errors.Is(err, agent.ErrUnknownCommand):
		return &jsonrpc2.Error{Code: rpc.CodeInvalidParams, Message: err.Error()}
	case errors.Is(err, agent.ErrTurnRunning):
		return errPromptRunning
	case errors.Is(err, agent.ErrSessionOwned), errors.Is(err, agent.ErrSessionReadOnly):
		return &jsonrpc2.Error{Code: rpc.CodeInvalidRequest, Message: err.Error()}
	case errors.Is(err, agent.ErrNothingToUndo):
		return &jsonrpc2.Error{Code: CodeResourceNotFound, Message: err.Error()}
	}
	return &jsonrpc2.Error{Code: rpc.CodeInternalError, Message: err.Error()}
}
