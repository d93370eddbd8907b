package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/ask"
	"github.com/kin-dev/kin/agent/files"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/agent/tool"
)

// connState is where a connection is in its lifecycle (as in LSP).
type connState int

const (
	stateCreated connState = iota
	stateInitialized
	stateShutDown
)

func (s connState) String() string {
	switch s {
	case stateCreated:
		return "created"
	case stateInitialized:
		return "initialized"
	case stateShutDown:
		return "shut down"
	}
	return fmt.Sprintf("connState(%d)", int(s))
}

// Options configure a Server.
type Options struct {
	Home       string              // KIN_HOME
	Getenv     func(string) string // the environment (tests inject theirs)
	Cwd        string              // the folder used when the editor names none
	Version    string
	Logger     *zap.Logger
	Trace      io.Writer    // every message in and out, secrets masked
	HTTPClient *http.Client // for the model service
	// Tools builds the built-in tools once the workspace folders are known.
	Tools func(roots []string) []tool.Tool
	// MCP, when set, runs the configured MCP servers of each connection.
	MCP *MCPOptions
	// Sandbox is the command sandbox the tools use, reported in initialize
	// and, when it does not confine commands, in a notice at start. Nil
	// means sandbox.Default() (which is also what the built-in tools use
	// when given none).
	Sandbox *sandbox.Sandbox
	// ApplyEditTimeout bounds the wait for the editor's answer to a
	// workspace/applyEdit; after it the edit's outcome is unknown. 0 is
	// files.DefaultEditTimeout (30 s).
	ApplyEditTimeout time.Duration
}

// Server serves one editor connection.
type Server struct {
	opts Options
	log  *zap.Logger

	// asks is every question to the person: approvals and elicitations.
	asks *ask.Broker
	// relay is set once initialize ran: from then on warnings and errors
	// of the log are sent as log/message.
	relay atomic.Bool
	// logs queues the relayed lines for the goroutine that sends them.
	logs chan LogMessage

	// disp runs requests off the read loop (dispatch.go); teardown stops
	// it.
	disp *Dispatcher
	down sync.Once // teardown

	// mu guards state, conn, svc, roots, gate, mcp, exitCode, docCaps and
	// forms.
	mu       sync.Mutex
	state    connState
	conn     *jsonrpc2.Conn
	svc      *agent.Service
	roots    []string // the editor's workspace folders: new sessions' default
	gate     *permission.Gate
	mcp      *MCPServers
	exitCode int
	// docCaps is what the editor said it does with its buffers.
	docCaps TextDocumentsClientCapabilities
	// forms is set when the editor said it shows elicitation forms: else
	// nobody can answer kin's own questions (headless).
	forms bool

	// overlay is the editor's open buffers: the connection's, shared by
	// its sessions.
	overlay *files.Overlay

	// sandboxSaid makes the start-up sandbox notices once per connection,
	// however many initialized notifications come.
	sandboxSaid sync.Once
}

// Serve runs the protocol on rwc until the editor sends exit or the stream
// closes, then shuts everything down. It returns the process exit code: 0
// after shutdown+exit or a closed stream, 1 for exit without shutdown.
func Serve(ctx context.Context, rwc io.ReadWriteCloser, opts Options) int {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	s := &Server{opts: opts, overlay: files.NewOverlay()}
	s.log = relayLogs(opts.Logger, s)
	s.asks = ask.New(asker{s})
	s.disp = NewDispatcher(func(id jsonrpc2.ID, res any, err error) { s.reply(context.Background(), s.connection(), id, res, err) }, errShutDown)
	s.logs = make(chan LogMessage, 64)
	go s.relayLogLines()
	// Not relayed as log/message: the editor got an error reply already.
	st := newStream(rwc, func(err error) { opts.Logger.Warn(BadInput(err, "skipped a bad frame"), zap.Error(err)) }, s.editorGone)
	connOpts := []jsonrpc2.ConnOpt{jsonrpc2.SetLogger(ZapLogger{s.log})}
	if opts.Trace != nil {
		connOpts = append(connOpts, traceOpts(opts.Trace)...)
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
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exitCode
}

// editorGone is called when a write to the editor failed: its end of the
// pipe is closed (or the socket broke), so nothing kin sends can arrive.
// That is the editor leaving, as a closed stdin is: the connection closes
// and Serve tears everything down.
func (s *Server) editorGone(err error) {
	// Not relayed as log/message: nothing sent can arrive, and the relay
	// would write from inside the failed write (jsonrpc2's send lock).
	s.opts.Logger.Warn("the editor stopped reading; closing the connection", zap.Error(err))
	if conn := s.connection(); conn != nil {
		go conn.Close() // not on the writer's goroutine: it holds jsonrpc2's send lock
	}
}

// teardown stops turns (denying what they wait for), MCP servers and logs.
// It first refuses new requests and waits for the running ones, which it
// cancels, so nothing starts a turn or a server after it.
func (s *Server) teardown(reason string) {
	// Once: shutdown's and the closed connection's may overlap, and the
	// second waits for the first.
	s.down.Do(func() { s.tearDown(reason) })
}

func (s *Server) tearDown(reason string) {
	s.mu.Lock()
	s.state = stateShutDown
	svc, mcp := s.svc, s.mcp
	s.mu.Unlock()
	s.disp.Stop()
	if svc != nil {
		svc.Stopping() // before the questions are withdrawn: see Service.Stopping
	}
	s.asks.Close(reason)
	s.disp.Wait()
	if svc != nil {
		svc.Shutdown()
	}
	if mcp != nil {
		mcp.Close()
	}
}

// route is one method in the dispatch table (see dispatch.go for where
// and in which order requests run).
type route struct {
	handle     func(ctx context.Context, s *Server, params json.RawMessage) (any, error)
	beforeInit bool // may be called before initialize
	// onLoop requests run on the read loop, and nothing is read until
	// they are done (their answer is written from another goroutine):
	// initialize only. Everything else runs off it.
	onLoop bool
	// shutsDown refuses every later request at once (on the loop) and runs
	// the handler, which waits for the running ones, off it (shutdown).
	shutsDown bool
	// The dispatcher's rules (Route, whose fields these are): asRoute
	// hands them on.
	order         Ordering
	startsInOrder bool
	cancellable   bool
	before        string
	bulk          bool
}

// Handle implements jsonrpc2.Handler. jsonrpc2 calls it inline in its read
// loop, so it only checks the lifecycle and hands the request on: nothing
// here may wait on the editor, the disk or the model, nor write to the
// editor. A write can block until the editor reads, and an editor may be
// blocked writing to kin (answering kin's workspace/applyEdit from its own
// read loop, say) until kin reads: every answer and notification the loop
// causes is written from another goroutine.
func (s *Server) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	// jsonrpc2 starts reading before NewConn returns, so the first message
	// can arrive before Serve has stored conn: store it here, before anything
	// this message starts can notify.
	s.mu.Lock()
	if s.conn == nil {
		s.conn = conn
	}
	s.mu.Unlock()
	params := json.RawMessage("{}")
	if req.Params != nil && string(*req.Params) != "null" {
		params = *req.Params
	}
	if req.Notif {
		s.handleNotification(conn, req.Method, params)
		return
	}
	r, ok := routes[req.Method]
	if !ok {
		go s.replyErr(context.Background(), conn, req.ID, &jsonrpc2.Error{Code: CodeMethodNotFound, Message: fmt.Sprintf("method not found: %s", req.Method)})
		return
	}
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	switch {
	case state == stateCreated && !r.beforeInit:
		go s.replyErr(context.Background(), conn, req.ID, &jsonrpc2.Error{Code: CodeNotInitialized, Message: "kin: the server is not initialized; send initialize first"})
		return
	case state == stateShutDown:
		go s.replyErr(context.Background(), conn, req.ID, errShutDown)
		return
	}
	switch {
	case r.onLoop:
		res, err := r.handle(ctx, s, params)
		go s.reply(context.Background(), conn, req.ID, res, err)
	case r.shutsDown:
		// Refuse what comes next at once, but tear down off the loop: the
		// requests teardown waits for may be writing, and the editor may
		// be writing to kin meanwhile; the loop must go on reading.
		s.mu.Lock()
		s.state = stateShutDown
		s.mu.Unlock()
		s.disp.Refuse()
		go func() {
			res, err := r.handle(context.Background(), s, params)
			s.reply(context.Background(), conn, req.ID, res, err)
		}()
	default:
		s.disp.Dispatch(req.ID, s.asRoute(r), params)
	}
}

func (s *Server) handleNotification(conn *jsonrpc2.Conn, method string, params json.RawMessage) {
	switch method {
	case NotifyInitialized:
		s.mu.Lock()
		mcp, initialized := s.mcp, s.state == stateInitialized
		s.mu.Unlock()
		if initialized {
			go s.sandboxSaid.Do(s.sandboxNotices) // not written from the read loop
		}
		if mcp != nil {
			go mcp.Start(context.Background())
		}
	case NotifyExit:
		s.mu.Lock()
		if s.state != stateShutDown {
			s.exitCode = 1
		}
		s.mu.Unlock()
		conn.Close()
	case NotifyCancelRequest:
		var p CancelParams
		if json.Unmarshal(params, &p) != nil {
			return
		}
		id, err := idOf(p.ID)
		if err != nil {
			return
		}
		s.cancelRequest(id)
	default:
		if h, ok := documentNotifications[method]; ok {
			h(s, params)
			return
		}
		s.log.Debug("ignored notification", zap.String("method", method))
	}
}

func (s *Server) reply(ctx context.Context, conn *jsonrpc2.Conn, id jsonrpc2.ID, res any, err error) {
	if err != nil {
		s.replyErr(ctx, conn, id, toRPCError(err))
		return
	}
	if res == nil {
		res = json.RawMessage("null")
	}
	if err := conn.Reply(ctx, id, res); err != nil {
		s.log.Debug("reply failed", zap.Error(err))
	}
}

func (s *Server) replyErr(ctx context.Context, conn *jsonrpc2.Conn, id jsonrpc2.ID, e *jsonrpc2.Error) {
	if err := conn.ReplyWithError(ctx, id, e); err != nil {
		s.log.Debug("reply failed", zap.Error(err))
	}
}

// notify sends a notification; a closed connection is not an error here.
func (s *Server) notify(method string, params any) {
	conn := s.connection()
	if conn == nil {
		return
	}
	if err := conn.Notify(context.Background(), method, params); err != nil && !errors.Is(err, jsonrpc2.ErrClosed) {
		s.log.Debug("notify failed", zap.String("method", method), zap.Error(err))
	}
}

// connection is the editor's connection.
func (s *Server) connection() *jsonrpc2.Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn
}

// service returns the agent and its gate, which exist once initialize ran.
func (s *Server) service() (*agent.Service, *permission.Gate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.svc, s.gate
}

// decode unmarshals params, naming the problem for the editor.
func decode(params json.RawMessage, v any) error {
	if err := json.Unmarshal(params, v); err != nil {
		return &jsonrpc2.Error{Code: CodeInvalidParams, Message: "invalid params: " + err.Error()}
	}
	return nil
}

func invalid(format string, args ...any) error {
	return &jsonrpc2.Error{Code: CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// toRPCError maps errors to protocol codes at the boundary.
func toRPCError(err error) *jsonrpc2.Error {
	var re *jsonrpc2.Error
	switch {
	case errors.As(err, &re):
		return re
	case isWorktreeError(err):
		re, _ := worktreeError(err)
		return re
	case errors.Is(err, agent.ErrSessionNotFound):
		return &jsonrpc2.Error{Code: CodeSessionNotFound, Message: err.Error()}
	case errors.Is(err, agent.ErrTurnRunning), errors.Is(err, agent.ErrSessionOwned), errors.Is(err, agent.ErrSessionReadOnly):
		return &jsonrpc2.Error{Code: CodeBusy, Message: err.Error()}
	case errors.Is(err, agent.ErrBadCursor), errors.Is(err, agent.ErrBadParams), errors.Is(err, agent.ErrUnknownCommand),
		errors.As(err, new(*agent.PartError)):
		return &jsonrpc2.Error{Code: CodeInvalidParams, Message: err.Error()}
	case errors.Is(err, agent.ErrTurnEnded):
		return &jsonrpc2.Error{Code: CodeTurnEnded, Message: err.Error()}
	case errors.Is(err, agent.ErrNotConfigured):
		return &jsonrpc2.Error{Code: CodeNotConfigured, Message: err.Error()}
	case errors.Is(err, ask.ErrUnknown), errors.Is(err, errNotFound), errors.Is(err, agent.ErrNothingToUndo):
		return &jsonrpc2.Error{Code: CodeNotFound, Message: err.Error()}
	case errors.Is(err, permission.ErrNotAnOption), errors.Is(err, errInvalidAnswer), errors.Is(err, ask.ErrOutdated):
		e := &jsonrpc2.Error{Code: CodeInvalidParams, Message: "invalid params: " + err.Error()}
		if d := answerErrorData(err); d != nil {
			e.SetError(d)
		}
		return e
	}
	return &jsonrpc2.Error{Code: CodeInternalError, Message: err.Error()}
}

var errNotFound = errors.New("not found")

// ZapLogger routes jsonrpc2's own log lines to zap, never to stdout (kin
// serve's and kin acp's connections).
type ZapLogger struct{ Log *zap.Logger }

// Printf implements jsonrpc2.Logger.
func (z ZapLogger) Printf(format string, v ...any) { z.Log.Debug(fmt.Sprintf(format, v...)) }
