package manager

import (
	"context"
	"maps"
	"os"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/calltool"
	"github.com/kin-dev/kin/mcp/catalog"
	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/connect"
	"github.com/kin-dev/kin/mcp/oauth"
	"github.com/kin-dev/kin/mcp/trust"
)

// Manager owns the live MCP connections. Create it with New.
type Manager struct {
	opts    Options
	host    Host
	log     *zap.Logger
	trust   *trust.Store
	oauth   *oauth.Manager
	names   *catalog.Names
	limits  catalog.Limits
	version string
	resTool []tool.Tool

	mu      sync.Mutex
	cfg     *config.Config
	servers map[string]*server
	closed  bool
	// shut mirrors closed for server.begin, which runs under the server's
	// lock and so cannot take mu: a server stopped by Close never starts
	// again.
	shut atomic.Bool
	// work counts the Start, Apply and Login calls under way; Close waits
	// for them, so no server's connect (a stdio server's process) outlives
	// it. Added to only under mu while not closed.
	work sync.WaitGroup
	// loaded is set by Load until Start has its servers: List shows the
	// enabled ones as connecting, not as edited since the last apply.
	loaded bool
	// applied is closed when Start has its servers (loaded turns false).
	applied chan struct{}
	applyMu sync.Mutex // one Start/Apply/Close at a time

	// seen are the read-only tools of each launch's last connection in this
	// process (by trust.Launch.Key), so that asking to launch it again
	// lists what trusting it would let run unasked.
	seenMu sync.Mutex
	seen   map[string]map[string]string

	// watch are the resources attached to questions (resources.go).
	watch watched
}

// New returns a Manager; nothing is loaded or connected until Load or Start.
func New(opts Options) *Manager {
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = connect.ConnectTimeout
	}
	m := &Manager{
		opts:    opts,
		host:    opts.Host,
		log:     opts.Logger,
		trust:   trust.Open(opts.KinHome),
		names:   catalog.NewNames(),
		limits:  catalog.DefaultLimits,
		version: opts.Version,
		servers: map[string]*server{},
		applied: make(chan struct{}),
	}
	if m.host == nil {
		m.host = nopHost{}
	}
	if m.log == nil {
		m.log = zap.NewNop()
	}
	if m.opts.Env == nil {
		m.opts.Env = os.LookupEnv
	}
	if opts.Limits != nil {
		m.limits = *opts.Limits
	}
	if m.version == "" {
		m.version = "dev"
	}
	// The sign-in URL goes to the person through the Host; without one no
	// person can be asked, and a server without a stored sign-in needs
	// mcp/login from a front end.
	var oh oauth.Host
	if opts.Host != nil {
		oh = oauthHost{m}
	}
	m.oauth = oauth.New(oauth.Options{KinHome: opts.KinHome, Host: oh, Logger: m.log.Named("oauth")})
	for _, n := range append(slices.Clone(opts.Reserved), calltool.ListResourcesName, calltool.ReadResourceName) {
		m.names.Reserve(n)
	}
	m.resTool = calltool.ResourceTools(m.resourceServers)
	return m
}

// Load reads the configuration so that List, Check and edits see it at
// once, before Start (which connects, and may wait minutes for a person)
// has got far: a front end calls it before it answers any request that
// reads the configuration, and then Start. It connects nothing.
func (m *Manager) Load() error {
	cfg, err := m.load()
	if err != nil {
		return err // Start reports it
	}
	m.mu.Lock()
	if m.cfg == nil {
		m.cfg, m.loaded = cfg, true
	}
	m.mu.Unlock()
	return nil
}

// Start loads the configuration, reports its notes, and connects every
// enabled server in parallel, asking first for untrusted ones. It returns
// when every server has settled (connected, or in another state).
func (m *Manager) Start(ctx context.Context) {
	cfg, err := m.load()
	if err != nil {
		m.host.Notice(LevelError, "MCP configuration: "+err.Error())
		return
	}
	for _, n := range cfg.Notices {
		m.host.Notice(LevelInfo, n)
	}
	for _, w := range cfg.Warnings {
		m.host.Notice(LevelWarning, "MCP configuration: "+w.String())
	}
	m.apply(ctx, cfg)
}

// Apply re-reads the configuration and makes the live servers match it: an
// unchanged connected server is kept, an unchanged one that is not connected
// is started again (silently when trusted), a changed one is stopped and
// started again (asking when its launch identity is no longer trusted), a
// removed or disabled one is stopped. It returns when all have settled.
func (m *Manager) Apply(ctx context.Context) error {
	cfg, err := m.load()
	if err != nil {
		return err
	}
	m.apply(ctx, cfg)
	return nil
}

// Refresh re-reads the configuration for List without connecting or
// stopping anything: an edited file shows at once, and mcp/apply makes the
// live servers match it.
func (m *Manager) Refresh() error {
	cfg, err := m.load()
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.cfg = cfg
	m.mu.Unlock()
	return nil
}

func (m *Manager) load() (*config.Config, error) {
	if m.opts.Fixed != nil {
		return &config.Config{Servers: slices.Clone(m.opts.Fixed)}, nil
	}
	return config.Load(m.opts.Workdir, m.opts.KinHome, config.WithLookupEnv(m.opts.Env))
}

// sawReadOnly remembers a launch's read-only tools; seenReadOnly returns
// them (nil: kin has not connected to that launch).
func (m *Manager) sawReadOnly(l trust.Launch, tools map[string]string) {
	m.seenMu.Lock()
	defer m.seenMu.Unlock()
	if m.seen == nil {
		m.seen = map[string]map[string]string{}
	}
	m.seen[l.Key()] = maps.Clone(tools)
}

func (m *Manager) seenReadOnly(l trust.Launch) map[string]string {
	m.seenMu.Lock()
	defer m.seenMu.Unlock()
	return m.seen[l.Key()]
}

// launchOf is what a trust grant of sc binds to, now (trust.LaunchOf: its
// project, the program it runs, where it starts, the digests of the
// project's files it runs).
func (m *Manager) launchOf(sc config.Server) trust.Launch {
	return trust.LaunchOf(sc, m.opts.Workdir, m.opts.KinHome, m.opts.Env)
}

func (m *Manager) apply(ctx context.Context, cfg *config.Config) {
	m.applyMu.Lock()
	defer m.applyMu.Unlock()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.work.Add(1)
	defer m.work.Done()
	old := m.servers
	next := map[string]*server{}
	var stopRemoved, stopChanged, start []*server
	for _, sc := range cfg.Servers {
		o, ok := old[sc.Name]
		if ok && sameServer(o.cfg, sc) {
			next[sc.Name] = o
			if st, _, _ := o.snapshot(); st != StateConnected && st != StateConnecting && st != StateAwaitingTrust {
				start = append(start, o)
			}
			continue
		}
		if ok {
			stopChanged = append(stopChanged, o)
		}
		s := newServer(m, sc)
		next[sc.Name] = s
		start = append(start, s)
	}
	for name, o := range old {
		if _, ok := next[name]; !ok {
			stopRemoved = append(stopRemoved, o)
		}
	}
	for _, s := range start {
		if m.startsAlone(s.cfg) {
			s.preconnect() // a turn starting now waits for it (Arriving)
		}
	}
	if m.loaded {
		close(m.applied)
	}
	m.servers, m.cfg, m.loaded = next, cfg, false
	m.mu.Unlock()

	parallel(stopChanged, func(s *server) { s.stop(false) })
	parallel(stopRemoved, func(s *server) { s.stop(true) })
	parallel(start, func(s *server) { s.start(ctx) })
}

func parallel(servers []*server, f func(*server)) {
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(s)
		}()
	}
	wg.Wait()
}

// sameServer reports whether two entries would run identically.
func sameServer(a, b config.Server) bool {
	return a.Scope == b.Scope && a.Transport == b.Transport && a.Command == b.Command &&
		slices.Equal(a.Args, b.Args) && maps.Equal(a.Env, b.Env) && a.URL == b.URL &&
		maps.Equal(a.Headers, b.Headers) && a.TimeoutMS == b.TimeoutMS && a.Disabled == b.Disabled &&
		slices.Equal(a.AllowedTools, b.AllowedTools) && a.AllowedToolsSet == b.AllowedToolsSet &&
		a.Auth == b.Auth && sameOAuth(a.OAuth, b.OAuth)
}

// sameOAuth compares two oauth blocks field by field: a changed client id,
// callback or scope set needs a new connection (and usually a new sign-in).
func sameOAuth(a, b *config.OAuth) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.ClientID == b.ClientID && a.CallbackHost == b.CallbackHost && a.CallbackPort == b.CallbackPort &&
		(a.Scopes == nil) == (b.Scopes == nil) && slices.Equal(a.Scopes, b.Scopes)
}

// Close stops every server (a stdio server's whole process group, reaped)
// and refuses later Start and Apply calls. It returns once the Start,
// Apply and Login calls under way have ended too: a server that was still
// connecting is stopped by its connect, which Close waits for (else kin
// could exit with the process it spawned still running).
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	m.shut.Store(true)
	all := slices.Collect(maps.Values(m.servers))
	m.mu.Unlock()
	parallel(all, func(s *server) { s.stop(false) })
	m.work.Wait()
}

// Tools implements tool.Source: the vetted tools of every connected
// server, by name, plus the two resource tools when a connected server
// offers resources.
func (m *Manager) Tools() []tool.Tool {
	var out []tool.Tool
	res := false
	for _, s := range m.sorted() {
		s.mu.Lock()
		if s.conn != nil && s.state == StateConnected {
			for _, t := range s.tools {
				out = append(out, t)
			}
			res = res || s.resources
		}
		s.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Spec().Name < out[j].Spec().Name })
	if res {
		out = append(out, m.resTool...)
	}
	return out
}

func (m *Manager) sorted() []*server {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := slices.Collect(maps.Values(m.servers))
	sort.Slice(out, func(i, j int) bool { return out[i].cfg.Name < out[j].cfg.Name })
	return out
}

func (m *Manager) resourceServers() []calltool.Binding {
	var out []calltool.Binding
	for _, s := range m.sorted() {
		s.mu.Lock()
		if s.conn != nil && s.state == StateConnected && s.resources {
			out = append(out, s)
		}
		s.mu.Unlock()
	}
	return out
}

// startsAlone reports whether sc would connect with nobody asked: enabled,
// trusted, and not waiting for a sign-in.
func (m *Manager) startsAlone(sc config.Server) bool {
	return sc.Connectable() && m.trust.IsTrusted(m.launchOf(sc)) && m.oauth.ConnectTimeout(sc, connect.ConnectTimeout) <= connect.ConnectTimeout
}

// Arriving implements tool.Arriving: the servers connecting with nobody
// asked (trusted, needing no sign-in), and the longest any may still take.
// Before Start has its servers, the configuration's servers that will.
// Never a server that failed, waits for its launch approval or a sign-in.
func (m *Manager) Arriving() (names []string, within time.Duration) {
	m.mu.Lock()
	cfg, loaded := m.cfg, m.loaded
	m.mu.Unlock()
	if loaded && cfg != nil {
		for _, sc := range cfg.Servers {
			if m.startsAlone(sc) {
				names = append(names, sc.Display().Name)
				within = connect.ConnectTimeout
			}
		}
		return names, within
	}
	now := time.Now()
	for _, s := range m.sorted() {
		if by, _, ok := s.arriving(); ok {
			names = append(names, s.disp.Name)
			within = max(within, by.Sub(now))
		}
	}
	return names, within
}

// AwaitArrived implements tool.Arriving: it returns once every server
// Arriving named has settled (connected, or failed), or ctx ends.
func (m *Manager) AwaitArrived(ctx context.Context) {
	m.mu.Lock()
	loaded, applied := m.loaded, m.applied
	m.mu.Unlock()
	if loaded {
		select {
		case <-applied:
		case <-ctx.Done():
			return
		}
	}
	for _, s := range m.sorted() {
		if _, settled, ok := s.arriving(); ok {
			select {
			case <-settled:
			case <-ctx.Done():
				return
			}
		}
	}
}

type nopHost struct{}

func (nopHost) ApproveLaunch(context.Context, LaunchRequest) (string, error) {
	return DecisionDeny, nil
}
func (nopHost) Elicit(context.Context, ElicitRequest) (ElicitResult, error) {
	return ElicitResult{Action: "decline"}, nil
}
func (nopHost) Status(Status)                   {}
func (nopHost) Notice(string, string)           {}
func (nopHost) RevokeGrant(string, string) bool { return false }
