package connect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/mcp/config"
)

// Limits and versions.
const (
	// ConnectTimeout bounds one server's connect and handshake.
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
}

func (e *Error) Error() string { return e.Msg }

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
}

// Conn is a live connection to one server.
type Conn struct {
	// Session is the MCP session. Use it for calls; do not Close it
	// directly (Close on the Conn also stops a stdio server's processes).
	Session *mcp.ClientSession
	// ProtocolVersion is the negotiated version.
	ProtocolVersion string

	red   *Redactor
	proc  *process
	done  chan struct{}
	close sync.Once
}

// Dial connects to srv, bounded by ConnectTimeout (or ctx's earlier
// deadline). It never contacts a server whose transport it cannot harden.
func Dial(ctx context.Context, srv config.Server, opts Options) (*Conn, error) {
	red := NewRedactor(srv)
	if err := checkServer(srv); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	c, err := attempt(ctx, srv, opts, opts.ProtocolVersion, red)
	if err == nil || opts.ProtocolVersion != "" {
		return c, err
	}
	var ce *Error
	if errors.As(err, &ce) && ce.Kind != KindConnect {
		return nil, err
	}
	// The first attempt probed with server/discover; a server that exits on
	// it (or answers it badly) gets one more try with the legacy handshake.
	if c2, err2 := attempt(ctx, srv, opts, LegacyProtocolVersion, red); err2 == nil {
		return c2, nil
	}
	return nil, err
}

func checkServer(srv config.Server) error {
	switch srv.Transport {
	case config.TransportStdio:
		if srv.Command == "" {
			return &Error{KindConfig, "no command to run"}
		}
	case config.TransportHTTP:
		if srv.Auth == "oauth" {
			return &Error{KindAuth, "this server uses OAuth sign-in, which this build of kin does not support yet; use a static header such as an API key"}
		}
		if err := CheckURL(srv.URL); err != nil {
			return &Error{KindConfig, err.Error()}
		}
	default:
		return &Error{KindConfig, fmt.Sprintf("transport %q cannot be connected", srv.Transport)}
	}
	return nil
}

// attempt makes one connection with the given protocol version ("" = the
// SDK's latest, which probes with server/discover).
func attempt(ctx context.Context, srv config.Server, opts Options, version string, red *Redactor) (*Conn, error) {
	impl := opts.Implementation
	if impl == nil {
		impl = &mcp.Implementation{Name: "kin", Version: "dev"}
	}
	copts := opts.Client
	client := mcp.NewClient(impl, &copts)
	client.AddSendingMiddleware(noCache)

	c := &Conn{red: red, done: make(chan struct{})}
	var t mcp.Transport
	var stats *httpStats
	switch srv.Transport {
	case config.TransportStdio:
		lookup := opts.Env
		if lookup == nil {
			lookup = os.LookupEnv
		}
		p, err := spawn(srv, opts.Workdir, lookup)
		if err != nil {
			return nil, &Error{KindSpawn, "start: " + red.Error(err)}
		}
		c.proc = p
		t = &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin, MaxLineLength: MaxMessage}
	case config.TransportHTTP:
		stats = &httpStats{}
		t = &mcp.StreamableClientTransport{
			Endpoint:     srv.URL,
			HTTPClient:   newHTTPClient(opts.HTTPTransport, srv.Headers, stats),
			MaxRetries:   2, // GET reconnects with Last-Event-ID only: they resume a stream, never re-send a request
			MaxEventSize: MaxMessage,
		}
	}
	cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		if c.proc != nil {
			c.proc.Stop()
		}
		switch {
		case stats != nil && stats.lastAuthStatus.Load() != 0:
			return nil, &Error{KindAuth, fmt.Sprintf(
				"the server rejected the credentials (HTTP %d); OAuth sign-in is not supported here, configure a static header such as an API key",
				stats.lastAuthStatus.Load())}
		case errors.Is(err, ErrRedirect):
			return nil, &Error{KindConnect, ErrRedirect.Error()}
		case ctx.Err() != nil:
			return nil, &Error{KindTimeout, fmt.Sprintf("no answer within %s", ConnectTimeout)}
		}
		return nil, &Error{KindConnect, red.Error(err)}
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
