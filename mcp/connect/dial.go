package connect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/visible"
	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/oauth"
	"github.com/kin-dev/kin/mcp/tasks"
)

// Limits and versions.
const (
	// ConnectTimeout bounds one server's connect and handshake, unless
	// Options.Timeout says otherwise (a first OAuth sign-in gets
	// oauth.SignInTimeout).
	ConnectTimeout = 10 * time.Second
	// MaxMessage bounds one inbound protocol message or HTTP response.
	MaxMessage = 1 << 20
	// LegacyProtocolVersion is pinned on the second attempt when the first
	// (which probes with server/discover) fails: some servers exit on the
	// unknown method instead of answering it.
	LegacyProtocolVersion = "2025-11-25"
)

// Kind classifies a connect failure.
type Kind string

// Kinds of failure.
const (
	KindConfig  Kind = "config"  // the entry cannot be connected as written
	KindSpawn   Kind = "spawn"   // the stdio command could not be started
	KindAuth    Kind = "auth"    // the server rejected the credentials, or needs sign-in
	KindTimeout Kind = "timeout" // no handshake within the time allowed
	KindConnect Kind = "connect" // anything else: refused, redirected, bad reply, exited
)

// Error is a connect failure. Msg never holds a secret.
type Error struct {
	Kind Kind
	Msg  string
	// cause is the *oauth.Error behind an OAuth failure (nil otherwise),
	// so a caller can tell a sign-in that is needed from one that is
	// misconfigured. Its text is Msg's source and holds no secret.
	cause error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the *oauth.Error behind an OAuth failure, or nil.
func (e *Error) Unwrap() error { return e.cause }

// Options configures Dial.
type Options struct {
	// Workdir is the working directory of stdio servers ("" = kin's).
	Workdir string
	// Env looks up kin's environment for the stdio baseline (PATH, HOME,
	// LANG); nil means os.LookupEnv.
	Env func(string) (string, bool)
	// Client holds the handlers (elicitation, list changes). Dial copies it.
	Client mcp.ClientOptions
	// Implementation names kin to the server; nil means {kin, dev}.
	Implementation *mcp.Implementation
	// HTTPTransport is the base round tripper for http servers (nil: a
	// clone of http.DefaultTransport). Tests use it; kin leaves it nil.
	HTTPTransport http.RoundTripper
	// ProtocolVersion pins the version of the first attempt (normally "").
	ProtocolVersion string
	// OAuthHandler, when set, returns the OAuth handler of an http server
	// (kin: oauth.(*Manager).Handler), set as the transport's
	// OAuthHandler. An error refuses the server before any network call.
	// Nil: no handler (a 401 is only explained).
	OAuthHandler func(config.Server) (auth.OAuthHandler, error)
	// Timeout bounds the connect and handshake; 0 means ConnectTimeout.
	// A connect that may have to wait for an OAuth sign-in needs
	// oauth.SignInTimeout (see oauth.(*Manager).ConnectTimeout).
	Timeout time.Duration
	// ListenTimeout bounds the wait for the acknowledgement of the
	// list-change subscription (see Conn.Listen); 0 means ListenTimeout.
	ListenTimeout time.Duration
	// Logger receives what a connection reports on its own (a stdio
	// server's non-protocol lines on stdout, redacted); nil: nothing.
	Logger *zap.Logger
	// ToolDropped, when set, is told of each tool go-sdk dropped from a
	// tools/list because its x-mcp-header annotations are invalid (once
	// per tool and reason for a connection; both strings are the
	// server's, clipped, to be shown as its text). See headers.go.
	ToolDropped func(tool, why string)
	// Confine, when set, runs a stdio server in the command sandbox
	// (package mcp/confine builds it); nil runs it unconfined.
	Confine *Confinement
	// Setup, when set, prepares each client before it connects (the
	// custom methods of an extension kin speaks: the Skills extension's).
	Setup func(*mcp.Client) error
}

// Conn is a live connection to one server.
type Conn struct {
	// Session is the MCP session. Use it for calls; do not Close it
	// directly (Close on the Conn also stops a stdio server's processes).
	Session *mcp.ClientSession
	// ProtocolVersion is the negotiated version.
	ProtocolVersion string
	// Order is the order the server wrote its forms' properties in.
	Order *PropertyOrder

	red    *Redactor
	proc   *process
	conf   *Confinement // the stdio server's, nil when unconfined
	listen *listen
	done   chan struct{}
	close  sync.Once
}

// Dial connects to srv, bounded by Options.Timeout (default
// ConnectTimeout) or ctx's earlier deadline. It never contacts a server
// whose transport it cannot harden.
func Dial(ctx context.Context, srv config.Server, opts Options) (*Conn, error) {
	red := NewRedactor(srv)
	if err := checkServer(srv); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	d := dialer{srv: srv, opts: opts, red: red, timeout: opts.Timeout}
	if d.timeout <= 0 {
		d.timeout = ConnectTimeout
	}
	if srv.Transport == config.TransportHTTP && opts.OAuthHandler != nil {
		h, err := opts.OAuthHandler(srv)
		if err != nil {
			return nil, d.oauthError(err)
		}
		d.handler = h
	}
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	c, err := d.attempt(ctx, opts.ProtocolVersion)
	if err == nil || opts.ProtocolVersion != "" {
		return c, err
	}
	var ce *Error
	if errors.As(err, &ce) && ce.Kind != KindConnect {
		return nil, err
	}
	// The first attempt probed with server/discover; a server that exits on
	// it (or answers it badly) gets one more try with the legacy handshake.
	if c2, err2 := d.attempt(ctx, LegacyProtocolVersion); err2 == nil {
		return c2, nil
	}
	return nil, err
}

// dialer is one Dial: the server, its options and what Dial worked out.
type dialer struct {
	srv     config.Server
	opts    Options
	red     *Redactor
	timeout time.Duration
	handler auth.OAuthHandler // nil: none
}

// oauthError turns an OAuth failure into an Error: a configuration that
// cannot sign in is KindConfig, anything else (sign-in needed, declined,
// timed out, refused) KindAuth. The message is the oauth.Error's, which
// names the fix and holds no credential; it is redacted all the same.
func (d *dialer) oauthError(err error) *Error {
	var oe *oauth.Error
	if !errors.As(err, &oe) {
		return &Error{Kind: KindAuth, Msg: "OAuth: " + d.red.Error(err)}
	}
	kind := KindAuth
	if oe.Kind == oauth.KindConfig {
		kind = KindConfig
	}
	return &Error{Kind: kind, Msg: d.red.String(oe.Msg), cause: oe}
}

func checkServer(srv config.Server) error {
	switch srv.Transport {
	case config.TransportStdio:
		if srv.Command == "" {
			return &Error{Kind: KindConfig, Msg: "no command to run"}
		}
	case config.TransportHTTP:
		if err := CheckURL(srv.URL); err != nil {
			return &Error{Kind: KindConfig, Msg: err.Error()}
		}
	default:
		return &Error{Kind: KindConfig, Msg: fmt.Sprintf("transport %q cannot be connected", srv.Transport)}
	}
	return nil
}

// attempt makes one connection with the given protocol version ("" = the
// SDK's latest, which probes with server/discover).
func (d *dialer) attempt(ctx context.Context, version string) (*Conn, error) {
	srv, opts, red := d.srv, d.opts, d.red
	impl := opts.Implementation
	if impl == nil {
		impl = &mcp.Implementation{Name: "kin", Version: "dev"}
	}
	copts := opts.Client
	if opts.ToolDropped != nil {
		copts.Logger = newDropWatch(copts.Logger, opts.ToolDropped)
	}
	client := mcp.NewClient(impl, &copts)
	// tasks/get, tasks/update, tasks/cancel (Tasks extension): sent only
	// for a task a server created (package mcp/tasks).
	if err := tasks.Register(client); err != nil {
		return nil, &Error{Kind: KindConfig, Msg: err.Error()}
	}
	if opts.Setup != nil {
		if err := opts.Setup(client); err != nil {
			return nil, &Error{Kind: KindConfig, Msg: err.Error()}
		}
	}
	l := newListen(opts.ListenTimeout)
	client.AddSendingMiddleware(noCache, l.sending)
	client.AddReceivingMiddleware(l.receiving)

	c := &Conn{red: red, listen: l, done: make(chan struct{}), Order: &PropertyOrder{}}
	var t mcp.Transport
	var stats *httpStats
	switch srv.Transport {
	case config.TransportStdio:
		lookup := opts.Env
		if lookup == nil {
			lookup = os.LookupEnv
		}
		p, err := spawn(srv, opts.Workdir, lookup, opts.Confine)
		if err != nil {
			msg := "start: " + red.Error(err)
			if opts.Confine != nil {
				msg += " (in kin's sandbox)"
			}
			return nil, &Error{Kind: KindSpawn, Msg: msg}
		}
		c.proc, c.conf = p, opts.Confine
		noise := func(line []byte) {
			opts.Logger.Warn("mcp stdio server wrote a line that is not JSON-RPC on stdout; skipped",
				zap.String("server", srv.Name), zap.String("line", visible.Cut(red.String(string(bytes.TrimSpace(line))), 200)))
		}
		// Redacted before cut: a secret cut in two is no longer found.
		f := newNoiseFilter(p.stdout, noise)
		f.redact = red.String
		f.order = c.Order
		f.sent = &methods{}
		t = &mcp.IOTransport{Reader: f, Writer: &sentWriter{w: p.stdin, m: f.sent}, MaxLineLength: MaxMessage}
	case config.TransportHTTP:
		stats = &httpStats{}
		t = &mcp.StreamableClientTransport{
			Endpoint:     srv.URL,
			HTTPClient:   newHTTPClient(opts.HTTPTransport, srv.Headers, srv.Auth == "oauth", stats, l, c.Order),
			MaxRetries:   2, // GET reconnects with Last-Event-ID only: they resume a stream, never re-send a request
			MaxEventSize: MaxMessage,
			OAuthHandler: d.handler,
		}
	}
	cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		// No Conn, so no Close: what the server's replies left kept
		// (reply.go) goes here, or each failed connect (a reconnect
		// loop) kept up to maxKept replies for as long as kin ran.
		forgetKept(c.Order)
		hint := ""
		if c.proc != nil {
			c.proc.Stop()
			hint = c.proc.SandboxHint(opts.Confine)
		}
		var oe *oauth.Error
		switch {
		case errors.As(err, &oe):
			return nil, d.oauthError(oe)
		case stats != nil && stats.lastAuthStatus.Load() != 0:
			status, challenge := stats.auth()
			if srv.Auth == "oauth" && d.handler != nil {
				// Signed in, and refused all the same.
				return nil, &Error{Kind: KindAuth, Msg: fmt.Sprintf(
					"the server refused the OAuth sign-in (HTTP %d); run mcp/login to sign in again, or check oauth.scopes", status)}
			}
			return nil, &Error{Kind: KindAuth, Msg: red.String(oauth.ExplainUnauthorized(status, challenge, len(srv.Headers) > 0))}
		case errors.Is(err, ErrRedirect):
			return nil, &Error{Kind: KindConnect, Msg: ErrRedirect.Error()}
		case ctx.Err() != nil:
			return nil, &Error{Kind: KindTimeout, Msg: fmt.Sprintf("no answer within %s", d.timeout) + hint}
		}
		return nil, &Error{Kind: KindConnect, Msg: red.Error(err) + hint}
	}
	c.Session = cs
	if r := cs.InitializeResult(); r != nil {
		c.ProtocolVersion = r.ProtocolVersion
	}
	go func() {
		_ = cs.Wait()
		close(c.done)
	}()
	return c, nil
}

// Done is closed when the session has ended, by Close or because the
// server went away.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Pid is a stdio server's process (group) id, 0 for http.
func (c *Conn) Pid() int {
	if c.proc == nil {
		return 0
	}
	return c.proc.Pid()
}

// Redact removes this server's secrets from s.
func (c *Conn) Redact(s string) string { return c.red.String(s) }

// Close ends the session; for a stdio server it also stops the whole
// process group and reaps the leader. Safe to call more than once.
func (c *Conn) Close() {
	c.close.Do(func() {
		if c.proc != nil {
			c.proc.Stop()
		}
		_ = c.Session.Close()
		<-c.done
		forgetKept(c.Order) // its replies nothing took (reply.go)
	})
}

// noCache keeps listings out of the SDK's response cache: definitions decide
// approvals, so every listing must reach the server.
func noCache(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		switch r := res.(type) {
		case *mcp.ListToolsResult:
			if r != nil {
				r.TTLMs = 0
			}
		case *mcp.ListResourcesResult:
			if r != nil {
				r.TTLMs = 0
			}
		case *mcp.ListResourceTemplatesResult:
			if r != nil {
				r.TTLMs = 0
			}
		case *mcp.ReadResourceResult:
			if r != nil {
				r.TTLMs = 0
			}
		case *mcp.ListPromptsResult:
			if r != nil {
				r.TTLMs = 0
			}
		}
		return res, err
	}
}
