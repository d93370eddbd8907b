package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent"
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
	// MCP, when set, runs the configured MCP servers for this connection.
	MCP MCPFactory
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

	// mu guards state, svc, gate, mcp, roots, inflight, exitCode and
	// docCaps.
	mu       sync.Mutex
	state    connState
	conn     *jsonrpc2.Conn
	svc      *agent.Service
	roots    []string // the editor's workspace folders: new sessions' default
	gate     *permission.Gate
	mcp      MCP
	elicit   *elicitations
	inflight map[jsonrpc2.ID]context.CancelFunc
	exitCode int
	// docCaps is what the editor said it does with its buffers.
	docCaps TextDocumentsClientCapabilities

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
	s := &Server{opts: opts, log: opts.Logger, inflight: map[jsonrpc2.ID]context.CancelFunc{}, overlay: files.NewOverlay()}
	s.elicit = newElicitations(s)
	st := newStream(rwc, func(err error) { s.log.Warn("skipped a bad frame", zap.Error(err)) })
	connOpts := []jsonrpc2.ConnOpt{jsonrpc2.SetLogger(zapLogger{s.log})}
	if opts.Trace != nil {
		connOpts = append(connOpts, traceOpts(opts.Trace)...)
	}
	conn := jsonrpc2.NewConn(ctx, st, s, connOpts...)
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

// teardown stops turns (denying what they wait for), MCP servers and logs.
func (s *Server) teardown(reason string) {
	s.mu.Lock()
	svc, gate, mcp := s.svc, s.gate, s.mcp
	for _, cancel := range s.inflight {
		cancel()
	}
	s.mu.Unlock()
	if gate != nil {
		gate.DenyAll("", reason)
	}
	s.elicit.cancelAll(reason)
	if svc != nil {
		svc.Shutdown()
	}
	if mcp != nil {
		mcp.Close()
	}
}

// route is one method in the dispatch table.
type route struct {
	handle     func(ctx context.Context, s *Server, params json.RawMessage) (any, error)
	beforeInit bool // may be called before initialize
	// async methods run off the read loop: they may wait on the person or
	// on a slow server, and can be cancelled with $/cancelRequest.
	async bool
	// asyncIf, when set, decides per request (an inline method whose
	// some requests may wait).
	asyncIf func(params json.RawMessage) bool
}

// Handle implements jsonrpc2.Handler. jsonrpc2 calls it inline in its read
// loop, so nothing here may wait on the editor.
func (s *Server) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	// jsonrpc2 starts reading before NewConn returns, so the first message
	// can arrive before Serve has stored conn: store it here, before anything
	// this message starts can notify.
	s.mu.Lock()
	if s.conn == nil {
		s.conn = conn
	}
	s.mu.Unlock()
	if req.Notif {
		s.handleNotification(ctx, conn, req)
		return
	}
	r, ok := routes[req.Method]
	if !ok {
		s.replyErr(ctx, conn, req.ID, &jsonrpc2.Error{Code: CodeMethodNotFound, Message: fmt.Sprintf("method not found: %s", req.Method)})
		return
	}
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	switch {
	case state == stateCreated && !r.beforeInit:
		s.replyErr(ctx, conn, req.ID, &jsonrpc2.Error{Code: CodeNotInitialized, Message: "kin: the server is not initialized; send initialize first"})
		return
	case state == stateShutDown:
		s.replyErr(ctx, conn, req.ID, &jsonrpc2.Error{Code: CodeInvalidRequest, Message: "kin: the server is shut down; send exit"})
		return
	}
	params := json.RawMessage("{}")
	if req.Params != nil && string(*req.Params) != "null" {
		params = *req.Params
	}
	if !r.async && (r.asyncIf == nil || !r.asyncIf(params)) {
		res, err := r.handle(ctx, s, params)
		s.reply(ctx, conn, req.ID, res, err)
		return
	}
	actx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	s.inflight[req.ID] = cancel
	s.mu.Unlock()
	go func() {
		defer cancel()
		res, err := r.handle(actx, s, params)
		s.mu.Lock()
		delete(s.inflight, req.ID)
		s.mu.Unlock()
		if actx.Err() != nil {
			err = &jsonrpc2.Error{Code: CodeRequestCancelled, Message: "request cancelled"}
		}
		s.reply(context.Background(), conn, req.ID, res, err)
	}()
}

func (s *Server) handleNotification(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	switch req.Method {
	case "initialized":
		s.mu.Lock()
		mcp, initialized := s.mcp, s.state == stateInitialized
		s.mu.Unlock()
		if initialized {
			s.sandboxSaid.Do(s.sandboxNotices)
		}
		if mcp != nil {
			go mcp.Start(context.Background())
		}
	case "exit":
		s.mu.Lock()
		if s.state != stateShutDown {
			s.exitCode = 1
		}
		s.mu.Unlock()
		conn.Close()
	case "$/cancelRequest":
		var p CancelParams
		if req.Params == nil || json.Unmarshal(*req.Params, &p) != nil {
			return
		}
		var id jsonrpc2.ID
		if err := json.Unmarshal(p.ID, &id); err != nil {
			return
		}
		s.mu.Lock()
		cancel := s.inflight[id]
		s.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	default:
		if h, ok := documentNotifications[req.Method]; ok {
			params := json.RawMessage("{}")
			if req.Params != nil {
				params = *req.Params
			}
			h(s, params)
			return
		}
		s.log.Debug("ignored notification", zap.String("method", req.Method))
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

// service returns the agent, which exists once initialize ran.
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
	case errors.Is(err, agent.ErrSessionNotFound):
		return &jsonrpc2.Error{Code: CodeSessionNotFound, Message: err.Error()}
	case errors.Is(err, agent.ErrTurnRunning), errors.Is(err, agent.ErrSessionOwned), errors.Is(err, agent.ErrSessionReadOnly):
		return &jsonrpc2.Error{Code: CodeBusy, Message: err.Error()}
	case errors.Is(err, agent.ErrBadCursor), errors.Is(err, agent.ErrBadParams), errors.Is(err, agent.ErrUnknownCommand):
		return &jsonrpc2.Error{Code: CodeInvalidParams, Message: err.Error()}
	case errors.Is(err, agent.ErrNotConfigured):
		return &jsonrpc2.Error{Code: CodeNotConfigured, Message: err.Error()}
	case errors.Is(err, permission.ErrUnknownRequest), errors.Is(err, errNotFound), errors.Is(err, agent.ErrNothingToUndo):
		return &jsonrpc2.Error{Code: CodeNotFound, Message: err.Error()}
	}
	return &jsonrpc2.Error{Code: CodeInternalError, Message: err.Error()}
}

var errNotFound = errors.New("not found")

// zapLogger routes jsonrpc2's own log lines to zap, never to stdout.
type zapLogger struct{ l *zap.Logger }

func (z zapLogger) Printf(format string, v ...any) { z.l.Debug(fmt.Sprintf(format, v...)) }
