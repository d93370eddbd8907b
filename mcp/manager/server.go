package manager

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/calltool"
	"github.com/kin-dev/kin/mcp/catalog"
	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/connect"
	"github.com/kin-dev/kin/mcp/trust"
)

// server is one configured server and, when connected, its live session and
// vetted tools. It implements calltool.Binding.
type server struct {
	m    *Manager
	cfg  config.Server
	disp config.Display
	red  *connect.Redactor
	id   string // trust.Hash(cfg): the launch identity grants are keyed on

	refresh       chan struct{} // a list change is pending (capacity 1)
	promptRefresh chan struct{} // a prompt list change is pending (capacity 1)

	mu        sync.Mutex
	life      context.Context // cancelled by stop
	kill      context.CancelFunc
	stopped   bool
	state     State
	lastErr   string
	conn      *connect.Conn
	defs      []catalog.Def
	tools     []*calltool.Tool
	resources bool
	listen    string            // why this connection's lists will not refresh ("" = they will)
	initialRO map[string]string // read-only tools of the initial list: name -> fingerprint
	known     map[string]string // every definition seen since approval: name -> fingerprint
	revoked   map[string]bool   // redefined tools: never auto-allowed again
	skipped   map[string]bool   // tools already reported as not in allowed_tools
	reported  map[string]string // tools already reported as left out: name -> reason
	omitted   []catalog.Omitted // the last listing's tools left out
	prompts   []Prompt          // the live connection's vetted prompts
	calls     map[*tool.Env]struct{}
}

func newServer(m *Manager, cfg config.Server) *server {
	return &server{
		m:             m,
		cfg:           cfg,
		disp:          cfg.Display(),
		red:           connect.NewRedactor(cfg),
		id:            trust.Hash(cfg),
		refresh:       make(chan struct{}, 1),
		promptRefresh: make(chan struct{}, 1),
		state:         StateStopped,
		known:         map[string]string{},
		revoked:       map[string]bool{},
		skipped:       map[string]bool{},
		reported:      map[string]string{},
		calls:         map[*tool.Env]struct{}{},
	}
}

// Binding.

func (s *server) Name() string        { return s.cfg.Name }
func (s *server) Identity() string    { return s.id }
func (s *server) Destination() string { return s.disp.Launch }

// Redact removes the server's secrets from t: its env and header values,
// URL credentials, and the OAuth tokens of its current sign-in.
func (s *server) Redact(t string) string {
	if t == "" {
		return "" // nothing to hide: spare the sign-in store a read
	}
	return s.redactor().String(t)
}

func (s *server) redactErr(err error) string {
	return s.redactor().Error(err)
}

func (s *server) redactor() *connect.Redactor {
	return s.red.With(s.m.oauth.Secrets(s.cfg)...)
}

func (s *server) Timeout() time.Duration {
	if s.cfg.TimeoutMS > 0 {
		return time.Duration(s.cfg.TimeoutMS) * time.Millisecond
	}
	return calltool.DefaultTimeout
}

func (s *server) Session() (*mcp.ClientSession, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil || s.state != StateConnected {
		return nil, false
	}
	return s.conn.Session, true
}

// Elicit asks the person a question of an input-required result.
func (s *server) Elicit(ctx context.Context, env tool.Env, p *mcp.ElicitParams) *mcp.ElicitResult {
	return s.ask(ctx, &env, p)
}

func (s *server) Track(env tool.Env) func() {
	e := &env
	s.mu.Lock()
	s.calls[e] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.calls, e)
		s.mu.Unlock()
	}
}

// set records a state and reports it. It returns msg as recorded
// (redacted).
func (s *server) set(st State, msg string) string {
	msg = s.Redact(msg)
	s.mu.Lock()
	s.state, s.lastErr = st, msg
	n := len(s.tools)
	s.mu.Unlock()
	s.m.log.Info("mcp server state", zap.String("server", s.cfg.Name), zap.String("state", string(st)), zap.String("error", msg))
	s.m.host.Status(Status{Server: s.cfg.Name, State: st, Tools: n, Error: msg})
	return msg
}

// fail records an unavailable (or needs_login) state and tells the person.
func (s *server) fail(st State, msg string) {
	msg = s.set(st, msg)
	verb := "unavailable"
	if st == StateNeedsLogin {
		verb = "needs sign-in"
	}
	s.m.host.Notice(LevelWarning, fmt.Sprintf("MCP server %s %s: %s", s.disp.Name, verb, msg))
}

// begin makes the server startable again and returns its lifetime context.
func (s *server) begin() context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kill != nil {
		s.kill()
	}
	s.life, s.kill = context.WithCancel(context.Background())
	s.stopped = false
	return s.life
}

// start approves (when untrusted), connects and discovers. It returns when
// the server has settled in a state.
func (s *server) start(ctx context.Context) {
	if !s.cfg.Connectable() {
		s.set(StateDisabled, "")
		return
	}
	life := s.begin()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopWatch := context.AfterFunc(life, cancel)
	defer stopWatch()

	if !s.approve(ctx, life) {
		return
	}
	s.connect(ctx, life)
}

// approve asks for the launch approval of a server that is not trusted.
// It reports whether the server may be started or contacted; when not,
// the state is set (denied) unless the server was stopped meanwhile.
func (s *server) approve(ctx, life context.Context) bool {
	if s.m.trust.IsTrusted(s.cfg) {
		return true
	}
	s.set(StateAwaitingTrust, "")
	dec, err := s.m.host.ApproveLaunch(ctx, s.launchRequest())
	if life.Err() != nil {
		return false // stopped meanwhile
	}
	switch {
	case err == nil && dec == DecisionTrust:
		if err := s.m.trust.Trust(s.cfg); err != nil {
			s.m.host.Notice(LevelWarning, fmt.Sprintf("MCP server %s: could not save the trust grant (connecting this time only): %s", s.disp.Name, s.redactErr(err)))
		}
	case err == nil && dec == DecisionAllowOnce:
	default:
		s.set(StateDenied, "the launch was not approved")
		return false
	}
	return true
}

func (s *server) launchRequest() LaunchRequest {
	r := LaunchRequest{
		Server:      s.cfg.Name,
		Transport:   string(s.cfg.Transport),
		Destination: s.disp.Launch,
		Scope:       string(s.cfg.Scope),
		Env:         s.disp.Env,
		Headers:     s.disp.Headers,
	}
	for _, e := range s.m.trust.List() {
		if e.Name == s.cfg.Name && e.Hash != s.id {
			r.Changed = true
		}
	}
	return r
}

// connect dials and discovers, bounded to connect.ConnectTimeout, or to
// oauth.SignInTimeout when the connect may have to wait for the person to
// sign in (an OAuth server without a usable stored sign-in).
func (s *server) connect(ctx context.Context, life context.Context) {
	s.set(StateConnecting, "")
	timeout := s.m.oauth.ConnectTimeout(s.cfg, connect.ConnectTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	opts := s.dialOptions()
	opts.Timeout = timeout
	conn, err := connect.Dial(ctx, s.cfg, opts)
	if err != nil {
		if life.Err() == nil {
			s.fail(s.connectFailure(err))
		}
		return
	}
	raws, err := catalog.List(ctx, conn.Session, s.m.limits)
	if err != nil {
		conn.Close()
		if ctx.Err() != nil && life.Err() == nil {
			err = fmt.Errorf("no tool list within %s", timeout)
		}
		if life.Err() == nil {
			s.fail(StateUnavailable, "tool discovery: "+s.redactErr(err))
		}
		return
	}
	// Prompts are listed before the server counts as connected, so its
	// commands are there as soon as its tools are.
	prompts, skippedPrompts, perr := s.listPrompts(ctx, conn.Session)
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		conn.Close()
		return
	}
	s.conn = conn
	s.listen = ""
	caps := conn.Session.InitializeResult().Capabilities
	s.resources = caps != nil && caps.Resources != nil
	ev := s.install(raws, true)
	n := len(s.tools)
	s.prompts = prompts
	s.mu.Unlock()

	s.set(StateConnected, "")
	s.m.host.Notice(LevelInfo, fmt.Sprintf("MCP server %s: %d tools from %s", s.disp.Name, n, s.disp.Launch))
	s.report(ev)
	s.promptReport(skippedPrompts, perr)
	if len(prompts) > 0 {
		s.m.promptsChanged()
	}
	go s.watch(conn)
	go s.refreshLoop(conn, s.refresh, s.refetch)
	go s.refreshLoop(conn, s.promptRefresh, s.refetchPrompts)
	go s.checkListen(conn)
}

func (s *server) dialOptions() connect.Options {
	return connect.Options{
		Workdir:        s.m.opts.Workdir,
		Env:            s.m.opts.Env,
		HTTPTransport:  s.m.opts.HTTPTransport,
		OAuthHandler:   s.m.oauth.Handler,
		Implementation: &mcp.Implementation{Name: "kin", Version: s.m.version},
		ListenTimeout:  s.m.opts.ListenTimeout,
		Logger:         s.m.log,
		Client: mcp.ClientOptions{
			Logger:             slog.New(slog.DiscardHandler),
			ElicitationHandler: s.elicit,
			// Input-required results are answered by calltool, which
			// sends nothing more after a decline; the SDK's loop would
			// send the decline back and retry.
			MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				request(s.refresh)
			},
			PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
				request(s.promptRefresh)
			},
			Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
				Form: &mcp.FormElicitationCapabilities{},
				URL:  &mcp.URLElicitationCapabilities{},
			}},
		},
	}
}

// checkListen warns, once for the connection, when the server advertised
// list changes but did not acknowledge the subscription the SDK opened for
// them (2026-07-28 sessions only: older ones get list_changed unasked, and
// cannot be checked), and records it for Check. Calls are unaffected.
func (s *server) checkListen(conn *connect.Conn) {
	s.mu.Lock()
	life := s.life
	s.mu.Unlock()
	r := conn.Listen(life)
	if r.Acknowledged() {
		return
	}
	lists, items := listNames(r.Missing)
	s.mu.Lock()
	if s.conn != conn || s.stopped {
		s.mu.Unlock()
		return
	}
	s.listen = fmt.Sprintf("its %s will not refresh automatically (calls still work): it advertises %s list changes but did not acknowledge the subscription: %s",
		items, lists, r.Problem)
	s.mu.Unlock()
	s.m.log.Warn("mcp list-change subscription not acknowledged", zap.String("server", s.cfg.Name), zap.String("lists", lists), zap.String("problem", r.Problem))
	s.m.host.Notice(LevelWarning, fmt.Sprintf(
		"MCP server %s advertises %s list changes but did not acknowledge the subscription; its %s will not refresh automatically (calls still work)",
		s.disp.Name, lists, items))
}

// listNames names the lists of n: ("tool", "tools"), ("tool and resource",
// "tools and resources").
func listNames(n mcp.NotificationSubscriptions) (lists, items string) {
	var l, i []string
	for _, k := range []struct {
		on   bool
		name string
	}{{n.ToolsListChanged, "tool"}, {n.ResourcesListChanged, "resource"}, {n.PromptsListChanged, "prompt"}} {
		if k.on {
			l = append(l, k.name)
			i = append(i, k.name+"s")
		}
	}
	return strings.Join(l, " and "), strings.Join(i, " and ")
}

// watch notices a connection that ends without stop.
func (s *server) watch(conn *connect.Conn) {
	<-conn.Done()
	conn.Close() // reap a stdio server's process group
	s.mu.Lock()
	if s.conn != conn || s.stopped {
		s.mu.Unlock()
		return
	}
	hadPrompts := s.detach()
	s.mu.Unlock()
	s.fail(StateUnavailable, "the connection was lost (apply the configuration again to reconnect)")
	if hadPrompts {
		s.m.promptsChanged()
	}
}

// stop ends the connection (if any). With report set the new state is
// reported (stopped, or disabled for a disabled server).
func (s *server) stop(report bool) {
	s.mu.Lock()
	s.stopped = true
	if s.kill != nil {
		s.kill()
	}
	conn := s.conn
	hadPrompts := s.detach()
	s.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
	if hadPrompts {
		s.m.promptsChanged()
	}
	s.m.names.Release(s.cfg.Name, nil)
	if report {
		st := StateStopped
		if !s.cfg.Connectable() {
			st = StateDisabled
		}
		s.set(st, "")
	}
}

// detach forgets the live connection and what it offered (tools,
// resources, prompts), reporting whether it had prompts: the caller then
// tells the Host, without locks. Call with s.mu held.
func (s *server) detach() (hadPrompts bool) {
	hadPrompts = len(s.prompts) > 0
	s.conn, s.defs, s.tools, s.resources, s.prompts = nil, nil, nil, false, nil
	return hadPrompts
}

// omittedTools lists the tools of the live connection that were left out.
func (s *server) omittedTools() []catalog.Omitted {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil
	}
	return slices.Clone(s.omitted)
}

// snapshot returns the state for List and Check.
func (s *server) snapshot() (State, string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state, s.lastErr, len(s.tools)
}
