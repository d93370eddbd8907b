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

	// mu guards sessions.
	mu       sync.Mutex
	sessions map[string]*Session

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
	turnID string
	cancel context.CancelFunc
	done   chan struct{}
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
	}
}

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

// open returns the open session, opening its log on first use.
func (s *Service) open(id string) (*Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess, ok := s.sessions[id]; ok {
		return sess, nil
	}
	recs, log, err := s.store.Open(id)
	if err != nil {
		return nil, err
	}
	sess := &Session{id: id, log: log, recs: recs, title: session.Summarize(id, recs).Title}
	for _, r := range session.Unfinished(recs) {
		sess.append(s, r)
	}
	s.sessions[id] = sess
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
		sess.mu.Lock()
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
	sess.mu.Lock()
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
// It returns once the turn has ended, so a following turn/start succeeds.
func (s *Service) CancelTurn(sessionID string) bool {
	s.mu.Lock()
	sess := s.sessions[sessionID]
	s.mu.Unlock()
	if sess == nil {
		return false
	}
	sess.mu.Lock()
	r := sess.running
	sess.mu.Unlock()
	if r == nil {
		return false
	}
	r.cancel()
	<-r.done
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
