// Package agent runs chat turns: it keeps sessions, sends the conversation
// to the model, runs the calls the model asks for through the permission
// gate, and reports progress through Events.
//
// It knows nothing of JSON-RPC or editors (package rpc translates), and it
// never lets a call run that the gate did not allow.
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
)

// MaxCallsPerTurn is how many tool calls one turn may make.
const MaxCallsPerTurn = 16

// Errors the front end maps to protocol codes.
var (
	ErrSessionNotFound = session.ErrNotFound
	ErrTurnRunning     = errors.New("a turn is already running on this session; cancel it or wait for turn/completed")
	ErrNotConfigured   = errors.New("kin: no model service is configured")
)

// Options configure a Service.
type Options struct {
	Home       string // KIN_HOME: sessions live in Home/sessions
	Roots      []string
	Model      model.Config
	HTTPClient *http.Client // for the model service; nil uses the default
	Tools      tool.Source
	Events     Events
	Gate       *permission.Gate
	Logger     *zap.Logger
	// Instructions replaces the default system instructions when set.
	Instructions string
}

// Service owns sessions and runs turns.
type Service struct {
	opts   Options
	store  *session.Store
	client *model.Client
	log    *zap.Logger

	// mu guards sessions and opening (sessions whose log is being read).
	mu       sync.Mutex
	sessions map[string]*Session
	opening  map[string]chan struct{}

	turns sync.WaitGroup
}

// Session is an open session.
type Session struct {
	id  string
	log *session.Log

	// mu guards recs, title and running.
	mu      sync.Mutex
	recs    []session.Record
	title   string
	running *running
}

type running struct {
	turnID    string
	cancel    context.CancelFunc
	cancelled bool // CancelTurn was called (guarded by the session's mu)
	done      chan struct{}
}

// settled returns with sess.mu held and no cancelled turn still ending on
// the session: a turn/start or session/delete sent right after turn/cancel
// waits for the cancelled turn to finish instead of being refused.
func (sess *Session) settled() {
	sess.mu.Lock()
	for r := sess.running; r != nil && r.cancelled; r = sess.running {
		sess.mu.Unlock()
		<-r.done
		sess.mu.Lock()
	}
}

// New builds a Service.
func New(opts Options) *Service {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Tools == nil {
		opts.Tools = tool.Static(nil)
	}
	return &Service{
		opts:     opts,
		store:    session.NewStore(filepath.Join(opts.Home, "sessions")),
		client:   model.New(opts.Model, opts.HTTPClient),
		log:      opts.Logger,
		sessions: map[string]*Session{},
		opening:  map[string]chan struct{}{},
	}
}

// ModelConfig returns the model configuration (without the key's value
// ever being marshalled).
func (s *Service) ModelConfig() model.Config { return s.opts.Model }

// SetRoots replaces the workspace folders tools are confined to.
func (s *Service) SetRoots(roots []string) { s.opts.Roots = roots }

// Roots returns the workspace folders.
func (s *Service) Roots() []string { return s.opts.Roots }

// NewSession creates a session.
func (s *Service) NewSession(title string) (session.Info, error) {
	info, log, err := s.store.Create(title)
	if err != nil {
		return session.Info{}, err
	}
	sess := &Session{id: info.SessionID, log: log, title: title}
	sess.recs = []session.Record{{Type: session.TypeSession, SessionID: info.SessionID, Title: title, Time: info.CreatedAt}}
	s.mu.Lock()
	s.sessions[info.SessionID] = sess
	s.mu.Unlock()
	return info, nil
}

// ListSessions lists stored sessions, newest first.
func (s *Service) ListSessions() ([]session.Info, error) { return s.store.List() }

// open returns the open session, opening its log on first use. The log is
// read without holding s.mu, so opening a long history never delays a
// request on another session (a turn/cancel looks its session up under
// s.mu); concurrent opens of one session wait for the first.
func (s *Service) open(id string) (*Session, error) {
	for {
		s.mu.Lock()
		if sess, ok := s.sessions[id]; ok {
			s.mu.Unlock()
			return sess, nil
		}
		if wait, ok := s.opening[id]; ok {
			s.mu.Unlock()
			<-wait
			continue
		}
		wait := make(chan struct{})
		s.opening[id] = wait
		s.mu.Unlock()

		sess, err := s.load(id)
		s.mu.Lock()
		delete(s.opening, id)
		if err == nil {
			s.sessions[id] = sess
		}
		s.mu.Unlock()
		close(wait)
		return sess, err
	}
}

// load reads a session's log and closes what a stopped kin left open.
func (s *Service) load(id string) (*Session, error) {
	recs, log, err := s.store.Open(id)
	if err != nil {
		return nil, err
	}
	sess := &Session{id: id, log: log, recs: recs, title: session.Summarize(id, recs).Title}
	for _, r := range session.Unfinished(recs) {
		sess.append(s, r)
	}
	return sess, nil
}

// Resume opens a session and returns its summary and history.
func (s *Service) Resume(id string) (session.Info, []session.HistoryItem, error) {
	sess, err := s.open(id)
	if err != nil {
		return session.Info{}, nil, err
	}
	sess.mu.Lock()
	recs := append([]session.Record(nil), sess.recs...)
	sess.mu.Unlock()
	return session.Summarize(id, recs), session.History(recs), nil
}

// DeleteSession removes a session that is not running a turn.
func (s *Service) DeleteSession(id string) error {
	s.mu.Lock()
	sess := s.sessions[id]
	s.mu.Unlock()
	if sess != nil {
		sess.settled()
		busy := sess.running != nil
		sess.mu.Unlock()
		if busy {
			return ErrTurnRunning
		}
		sess.log.Close()
		s.mu.Lock()
		delete(s.sessions, id)
		s.mu.Unlock()
	}
	if g := s.opts.Gate; g != nil {
		g.Grants().DropSession(id)
	}
	return s.store.Delete(id)
}

// StartTurn begins a turn and returns its id at once.
func (s *Service) StartTurn(sessionID, input string) (string, error) {
	if m := s.opts.Model.Missing(); m != "" {
		return "", fmt.Errorf("%w: %s", ErrNotConfigured, m)
	}
	sess, err := s.open(sessionID)
	if err != nil {
		return "", err
	}
	sess.settled()
	if sess.running != nil {
		sess.mu.Unlock()
		return "", ErrTurnRunning
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{turnID: newTurnID(), cancel: cancel, done: make(chan struct{})}
	sess.running = r
	sess.mu.Unlock()

	s.turns.Add(1)
	go func() {
		defer s.turns.Done()
		defer close(r.done)
		defer cancel()
		t := &turn{svc: s, sess: sess, id: r.turnID, input: input, release: func() {
			sess.mu.Lock()
			sess.running = nil
			sess.mu.Unlock()
		}}
		t.run(ctx)
	}()
	return r.turnID, nil
}

// CancelTurn stops the session's running turn; it reports whether one ran.
// It does not wait for the turn to end (that may take a file sync or a
// process group's kill): TurnDone follows, and a StartTurn or
// DeleteSession on the session waits for the cancelled turn to end.
func (s *Service) CancelTurn(sessionID string) bool {
	s.mu.Lock()
	sess := s.sessions[sessionID]
	s.mu.Unlock()
	if sess == nil {
		return false
	}
	sess.mu.Lock()
	r := sess.running
	if r != nil {
		r.cancelled = true
	}
	sess.mu.Unlock()
	if r == nil {
		return false
	}
	r.cancel()
	return true
}

// Busy reports whether any turn is running.
func (s *Service) Busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sess := range s.sessions {
		sess.mu.Lock()
		r := sess.running
		sess.mu.Unlock()
		if r != nil {
			return true
		}
	}
	return false
}

// Shutdown cancels every running turn, waits for them to record how they
// ended, and closes the session logs.
func (s *Service) Shutdown() {
	s.mu.Lock()
	var all []*Session
	for _, sess := range s.sessions {
		all = append(all, sess)
	}
	s.mu.Unlock()
	for _, sess := range all {
		sess.mu.Lock()
		if r := sess.running; r != nil {
			r.cancel()
		}
		sess.mu.Unlock()
	}
	s.turns.Wait()
	for _, sess := range all {
		sess.log.Close()
	}
}

// append writes a record to the session log and keeps it in memory. A log
// that cannot be written is reported, not fatal: the turn goes on.
func (sess *Session) append(s *Service, r session.Record) {
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	if err := sess.log.Append(r); err != nil {
		s.log.Error("session log write failed", zap.String("session", sess.id), zap.Error(err))
	}
	sess.mu.Lock()
	sess.recs = append(sess.recs, r)
	sess.mu.Unlock()
}

func newTurnID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "t_" + hex.EncodeToString(b[:])
}

// RecordElicitation notes in a session's log that an MCP server asked the
// person something and how it was answered (never the answer itself), so
// resume shows it and a headless decline is on record.
func (s *Service) RecordElicitation(sessionID, requestID, server, mode, message, action, reason string) {
	sess, err := s.open(sessionID)
	if err != nil {
		return
	}
	sess.append(s, session.Record{Type: session.TypeElicit, RequestID: requestID, Server: server, Mode: mode,
		Title: message, Decision: action, Reason: reason})
}
