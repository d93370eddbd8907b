package manager

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/ask"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/calltool"
	"github.com/kin-dev/kin/mcp/catalog"
	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/connect"
	"github.com/kin-dev/kin/mcp/tasks"
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
	// launch is what the current start runs (and a grant binds to);
	// trusted says the person trusted it (not "allow once"): only then do
	// read-only tools run without asking, and only those in allowed.
	launch   trust.Launch
	trusted  bool
	allowed  map[string]string // read-only tools the grant lets run unasked (nil: not known yet)
	known    map[string]string // every definition seen since approval: name -> fingerprint
	revoked  map[string]bool   // redefined tools: never auto-allowed again
	skipped  map[string]bool   // tools already reported as not in allowed_tools
	reported map[string]string // tools already reported as left out: name -> reason
	omitted  []catalog.Omitted // the last listing's tools left out
	prompts  []Prompt          // the live connection's vetted prompts
	skills   []Skill           // the live connection's skills listing (the Skills extension)
	instr    instructions      // the last connection's instructions (instructions.go)
	calls    map[*inflight]struct{}
	// settled is closed when the server leaves the connecting state (nil
	// while it is not connecting); connectBy is when that connect gives
	// up, zero for one that may wait for a person (a sign-in).
	settled   chan struct{}
	connectBy time.Time

	// asking counts the server's questions open before the person
	// (elicit.go: at most MaxOpenQuestions); floodTold is set while a
	// notice has said some were declined, until none is open.
	asking    atomic.Int32
	floodTold atomic.Bool
}

// inflight is a call in flight on the server (Track): what a legacy
// elicitation/create is attributed to, whose clock stops while the person
// answers it, and whose end ends the question.
type inflight struct {
	env tool.Env
	ctx context.Context // the call's: its clock is held while the person is asked
	// end ends with the call, its cause an *ask.Ended saying how.
	end  context.Context
	stop context.CancelCauseFunc
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
		calls:         map[*inflight]struct{}{},
	}
}

// Binding.

func (s *server) Name() string        { return s.cfg.Name }
func (s *server) Identity() string    { return s.id }
func (s *server) Destination() string { return s.disp.Launch }

// Launch implements calltool.Binding: the key of the launch this server
// was last approved as ("" before any approval).
func (s *server) Launch() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.launch.Hash == "" {
		return ""
	}
	return s.launch.Key()
}

// Trusted implements calltool.Binding: the launch this connection was
// approved as is trusted, and still is in the trust ledger, read now.
func (s *server) Trusted() bool {
	s.mu.Lock()
	l, trusted := s.launch, s.trusted
	s.mu.Unlock()
	return trusted && s.m.trust.IsTrusted(l)
}

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

// Track records a call in flight until untrack, which says how it ended
// (ask.ReasonCallEnded, or ask.ReasonCancelled when its turn was).
func (s *server) Track(ctx context.Context, env tool.Env) func(reason string) {
	c := &inflight{env: env, ctx: ctx}
	c.end, c.stop = context.WithCancelCause(context.Background())
	s.mu.Lock()
	s.calls[c] = struct{}{}
	s.mu.Unlock()
	return func(reason string) {
		s.mu.Lock()
		delete(s.calls, c)
		s.mu.Unlock()
		c.stop(&ask.Ended{Reason: reason})
	}
}

// inflightCalls are the calls in flight now.
func (s *server) inflightCalls() []*inflight {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*inflight, 0, len(s.calls))
	for c := range s.calls {
		out = append(out, c)
	}
	return out
}

// set records a state and reports it. It returns msg as recorded
// (redacted).
func (s *server) set(st State, msg string) string {
	msg = s.Redact(msg)
	s.mu.Lock()
	s.state, s.lastErr = st, msg
	s.markConnecting(st == StateConnecting, time.Time{})
	n := len(s.tools)
	s.mu.Unlock()
	s.m.log.Info("mcp server state", zap.String("server", s.cfg.Name), zap.String("state", string(st)), zap.String("error", msg))
	s.m.host.Status(Status{Server: s.cfg.Name, State: st, Tools: n, Error: msg})
	return msg
}

// markConnecting keeps settled and connectBy in step with the state: a
// server entering the connecting state gets a settled channel (by: when its
// connect gives up; zero when it may wait for a person), one leaving it has
// its channel closed. Call with s.mu held.
func (s *server) markConnecting(connecting bool, by time.Time) {
	switch {
	case connecting && s.settled == nil:
		s.settled, s.connectBy = make(chan struct{}), by
	case connecting && !by.IsZero():
		s.connectBy = by
	case !connecting && s.settled != nil:
		close(s.settled)
		s.settled, s.connectBy = nil, time.Time{}
	}
}

// preconnect marks a server about to be started with nobody asked as
// connecting already (bounded by a connect's time), so that a turn starting
// before its start runs waits for it. Call with the Manager's lock held.
func (s *server) preconnect() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == StateConnected || s.state == StateConnecting {
		return
	}
	s.state = StateConnecting
	s.markConnecting(true, time.Now().Add(connect.ConnectTimeout))
}

// arriving reports, for a server connecting on its own (trusted or allowed,
// needing nobody), when its connect gives up and the channel closed when it
// settles; ok is false for any other server.
func (s *server) arriving() (by time.Time, settled <-chan struct{}, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateConnecting || s.settled == nil || s.connectBy.IsZero() {
		return time.Time{}, nil, false
	}
	return s.connectBy, s.settled, true
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

// begin makes the server startable again and returns its lifetime context;
// once the manager is closed the context is already cancelled (Close may
// have stopped the server before a start or login under way got here).
func (s *server) begin() context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kill != nil {
		s.kill()
	}
	s.life, s.kill = context.WithCancel(context.Background())
	if s.m.shut.Load() {
		s.kill()
		s.stopped = true
		return s.life
	}
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
	if life.Err() != nil {
		return // the manager is closed
	}
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
	l := s.m.launchOf(s.cfg)
	if g, ok := s.m.trust.Granted(l); ok {
		if g.FirstRelease {
			// a first-release grant of the same global launch: carried over
			_ = s.m.trust.Trust(l, nil)
		}
		s.setLaunch(l, true, g.ReadOnly)
		return true
	}
	s.set(StateAwaitingTrust, "")
	req, known := s.launchRequest(l)
	dec, err := s.m.host.ApproveLaunch(ctx, req)
	if life.Err() != nil {
		return false // stopped meanwhile
	}
	switch {
	case err == nil && dec == DecisionTrust:
		if err := s.m.trust.Trust(l, known); err != nil {
			s.m.host.Notice(LevelWarning, fmt.Sprintf("MCP server %s: could not save the trust grant (connecting this time only): %s", s.disp.Name, s.redactErr(err)))
		}
		s.setLaunch(l, true, known)
	case err == nil && dec == DecisionAllowOnce:
		// once: every call asks, read-only or not
		s.setLaunch(l, false, nil)
	default:
		s.set(StateDenied, "the launch was not approved")
		return false
	}
	return true
}

func (s *server) setLaunch(l trust.Launch, trusted bool, allowed map[string]string) {
	s.mu.Lock()
	s.launch, s.trusted, s.allowed = l, trusted, allowed
	s.mu.Unlock()
}

// launchRequest is the launch approval: what runs and where, why it is
// asked again, and the read-only tools that trusting it lets run without
// asking, when kin knows them (from an earlier grant of this server, or
// this kin's last connection to it). known is that list, nil when kin has
// not seen the server's tools.
func (s *server) launchRequest(l trust.Launch) (r LaunchRequest, known map[string]string) {
	r = LaunchRequest{
		Server:      s.cfg.Name,
		Transport:   string(s.cfg.Transport),
		Destination: s.disp.Launch,
		Scope:       string(s.cfg.Scope),
		Env:         s.disp.Env,
		Headers:     s.disp.Headers,
		Workdir:     l.Workdir,
		Sandbox:     s.confinement(l).Describe,
	}
	r.Program = l.ProjectProgram(s.cfg.Command)
	if why := s.m.trust.Changed(l); why != "" {
		r.Changed, r.ChangedWhy = true, why
	}
	known = s.m.seenReadOnly(l)
	if known == nil {
		known = s.m.trust.Previous(l)
	}
	if known != nil {
		r.ReadOnlyTools = slices.Sorted(maps.Keys(known))
		if r.ReadOnlyTools == nil {
			r.ReadOnlyTools = []string{}
		}
	}
	return r, known
}

// connect dials and discovers, bounded to connect.ConnectTimeout (or
// Options.ConnectTimeout), or to oauth.SignInTimeout when the connect may
// have to wait for the person to sign in (an OAuth server without a usable
// stored sign-in).
func (s *server) connect(ctx context.Context, life context.Context) {
	base := s.m.opts.ConnectTimeout
	timeout := s.m.oauth.ConnectTimeout(s.cfg, base)
	s.set(StateConnecting, "")
	if timeout <= base { // longer: it may wait for a person to sign in
		s.mu.Lock()
		s.markConnecting(s.state == StateConnecting, time.Now().Add(timeout))
		s.mu.Unlock()
	}
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
	s.skills = nil
	s.mu.Unlock()
	if declaresSkills(conn) {
		s.listSkills(ctx, conn)
	}
	s.takeInstructions(conn)

	s.set(StateConnected, "")
	tools := "tools"
	if n == 1 {
		tools = "tool"
	}
	s.m.host.Notice(LevelInfo, fmt.Sprintf("MCP server %s: %d %s from %s", s.disp.Name, n, tools, s.disp.Launch))
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
	s.mu.Lock()
	workdir := s.launch.Workdir // where the approved launch starts
	launch := s.launch
	s.mu.Unlock()
	if workdir == "" {
		workdir = s.m.opts.Workdir
	}
	plan := s.confinement(launch)
	if err := plan.Prepare(); err != nil {
		s.m.log.Warn("mcp sandbox: state folder", zap.String("server", s.cfg.Name), zap.Error(err))
	}
	if plan.Refused {
		plan.Confine = &connect.Confinement{Refuse: plan.Describe}
	}
	return connect.Options{
		Confine:        plan.Confine,
		Workdir:        workdir,
		Env:            s.m.opts.Env,
		HTTPTransport:  s.m.opts.HTTPTransport,
		OAuthHandler:   s.m.oauth.Handler,
		Implementation: &mcp.Implementation{Name: "kin", Version: s.m.version},
		ListenTimeout:  s.m.opts.ListenTimeout,
		Logger:         s.m.log,
		Setup:          registerSkillMethods,
		ToolDropped:    s.toolDropped,
		Client: mcp.ClientOptions{
			Logger:                     slog.New(slog.DiscardHandler),
			ElicitationHandler:         s.elicit,
			ElicitationCompleteHandler: s.elicitComplete,
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
			ResourceUpdatedHandler: s.resourceUpdated, // resources.go
			// The Tasks extension is declared: calltool follows a task.
			Capabilities: tasks.Declare(&mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
				Form: &mcp.FormElicitationCapabilities{},
				URL:  &mcp.URLElicitationCapabilities{},
			}}),
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
	s.fail(StateUnavailable, "the connection was lost (apply the configuration again to reconnect)"+conn.SandboxHint())
	if hadPrompts {
		s.m.promptsChanged()
	}
}

// stop ends the connection (if any). With report set the new state is
// reported (stopped, or disabled for a disabled server).
func (s *server) stop(report bool) {
	s.mu.Lock()
	s.stopped = true
	s.markConnecting(false, time.Time{}) // nobody waits for a stopped server
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
	if s.conn != nil {
		s.m.forgetWatch(s.conn.Session) // its subscriptions end with it
	}
	for _, t := range s.tools {
		t.Revoke() // a turn may still hold it; the next connection lists its own
	}
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
