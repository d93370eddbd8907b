package agent

import (
	"fmt"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/permission"
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
	if sess.running != nil || sess.held {
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

// SessionConfig is what session/configure changes; empty (nil) fields are
// left as they are.
type SessionConfig struct {
	Mode   permission.Mode
	Model  *string
	Effort *string
}

// Configured is a session's configuration after a change.
type Configured struct {
	SessionID     string
	Mode          permission.Mode
	Model, Effort string
}

// Configure changes a session's settings; everything asked is checked
// before anything changes. A new mode is recorded (so it survives resume)
// and takes effect from the next decision, also in a turn that is running:
// the gate reads it for every call. A model or effort changes between turns
// only (ErrTurnRunning during one), is recorded, and is used from the next
// request on, also after resume; switching to a model that does not take
// the session's effort drops the effort, unless the change names one (then
// it must fit).
func (s *Service) Configure(sessionID string, c SessionConfig, defaultRoots []string) (Configured, error) {
	sess, _, err := s.open(sessionID, defaultRoots, session.Query{})
	if err != nil {
		return Configured{}, err
	}
	if err := sess.readOnly(); err != nil {
		return Configured{}, err
	}
	var mode permission.Mode
	if c.Mode != "" {
		if mode, err = permission.ParseMode(string(c.Mode)); err != nil {
			return Configured{}, fmt.Errorf("%w: %v", ErrBadParams, err)
		}
	}
	if c.Model != nil || c.Effort != nil {
		if err := s.configureModel(sess, c); err != nil {
			return Configured{}, err
		}
	}
	if c.Mode != "" {
		if err := sess.setMode(mode); err != nil {
			return Configured{}, err
		}
	}
	m, effort := sess.choice()
	if m == "" {
		m = s.models.Default
	}
	return Configured{SessionID: sessionID, Mode: sess.currentMode(), Model: m, Effort: effort}, nil
}

// configureModel changes the session's model and effort, between turns.
func (s *Service) configureModel(sess *Session, c SessionConfig) error {
	r := &running{cancel: func() {}, done: make(chan struct{})}
	if err := sess.reserve(r); err != nil {
		return err
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
		return err
	}
	if m.Model == curModel && kept == curEffort {
		return nil
	}
	if _, err := sess.append(session.Record{Type: session.TypeConfigure, Model: m.Model, Effort: kept}); err != nil {
		return err
	}
	if err := sess.sync(); err != nil {
		return err
	}
	sess.mu.Lock()
	sess.model, sess.effort = m.Model, kept
	sess.mu.Unlock()
	if m.Model != curModel {
		s.compactAhead(sess, m)
	}
	return nil
}

// compactAhead tells the person, when the session has just switched to m,
// that the conversation is past m's threshold and will be summarised
// before the next question (the turn's own check, made now).
func (s *Service) compactAhead(sess *Session, m model.Config) {
	if _, err := sess.conversation(); err != nil {
		return
	}
	tokens := sess.estimate(0, outputBudget(m.Window()))
	if tokens <= int64(s.models.Threshold()*float64(m.Window())) {
		return
	}
	s.opts.Events.Notice(compactAheadNotice(sess.id, m, tokens, s.models.Threshold()))
}
