package agent

import (
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/session"
)

// reserve marks the session busy with r, unless it cannot run turns here or
// something runs already. A turn cancelled just before is waited for (see
// settled).
func (sess *Session) reserve(r *running) error {
	sess.settled()
	defer sess.mu.Unlock()
	if err := sess.notOwned; err != nil {
		return err
	}
	if sess.running != nil {
		return ErrTurnRunning
	}
	sess.running = r
	return nil
}

// sessionModel is the model the session's next request goes to: its own,
// or the default when it names none or one kin no longer has (fellBack
// then names the one it had).
func (s *Service) sessionModel(sess *Session) (cfg model.Config, fellBack string) {
	id, _ := sess.choice()
	if m, ok := s.models.Find(id); ok {
		return m, ""
	}
	return s.models.DefaultConfig(), id
}

// SessionConfig is what session/configure changes; nil fields stay.
type SessionConfig struct {
	Model  *string
	Effort *string
}

// Configured is a session's configuration after a change.
type Configured struct {
	SessionID     string
	Model, Effort string
}

// Configure changes a session's model or effort between turns (refused
// with ErrTurnRunning during one). The choice is recorded, so it survives
// resume. Switching to a model that does not take the session's effort
// drops the effort, unless the change names one (then it must fit).
func (s *Service) Configure(sessionID string, c SessionConfig, defaultRoots []string) (Configured, error) {
	sess, _, err := s.open(sessionID, defaultRoots, session.Query{})
	if err != nil {
		return Configured{}, err
	}
	r := &running{cancel: func() {}, done: make(chan struct{})}
	if err := sess.reserve(r); err != nil {
		return Configured{}, err
	}
	defer func() {
		sess.mu.Lock()
		sess.running = nil
		sess.mu.Unlock()
		close(r.done)
	}()
	curModel, curEffort := sess.choice()
	id, effort := curModel, curEffort
	if c.Model != nil {
		id = *c.Model
	}
	if c.Effort != nil {
		effort = *c.Effort
	}
	m, kept, err := s.choose(id, effort, curModel)
	if err != nil && c.Effort == nil && c.Model != nil {
		// the old effort does not fit the new model: drop it
		m, kept, err = s.choose(id, "", curModel)
	}
	if err != nil {
		return Configured{}, err
	}
	if m.Model == curModel && kept == curEffort {
		return Configured{SessionID: sessionID, Model: m.Model, Effort: kept}, nil
	}
	if _, err := sess.append(session.Record{Type: session.TypeConfigure, Model: m.Model, Effort: kept}); err != nil {
		return Configured{}, err
	}
	if err := sess.sync(); err != nil {
		return Configured{}, err
	}
	sess.mu.Lock()
	sess.model, sess.effort = m.Model, kept
	sess.mu.Unlock()
	return Configured{SessionID: sessionID, Model: m.Model, Effort: kept}, nil
}
