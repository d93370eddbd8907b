package agent

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/hooks"
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/spend"
)

// hookAsker sends a turn's prompt hooks to the model service the turn
// talks to (its client, keys and base URL; the hook's model when it names
// one), as compaction's summary is sent: one request, no tools, within
// the spend limits, its usage counted as the turn's. What is sent is
// kin's instructions and the hook's prompt with the hook's input (which
// the conversation already holds): nothing from the environment. Agent
// hooks' judges go the same way, with read-only tools (hookagent.go).
type hookAsker struct{ t *turn }

// target is the model a hook's request goes to, and its client.
func (a hookAsker) target(q hooks.PromptRequest) (model.Config, *model.Client) {
	t := a.t
	if q.Model == "" || q.Model == t.cfg.Model {
		return t.cfg, t.client
	}
	cfg := t.cfg
	cfg.Model = q.Model
	return cfg, t.svc.hookClient(t.cfg, q.Model)
}

func (a hookAsker) about(q hooks.PromptRequest) int64 {
	return spend.Estimate(len(q.Instructions) + len(q.Text))
}

// Allow checks the spend limits before the request, as before every
// request of the turn (it may ask the person; a stop there stops the turn
// at its next request too).
func (a hookAsker) Allow(ctx context.Context, q hooks.PromptRequest) (func(), error) {
	cfg, _ := a.target(q)
	return a.allow(ctx, cfg.Model, a.about(q))
}

// allow is Allow for a request of about input tokens to modelID (an agent
// hook's judge checks each of its requests). The request holds its
// estimate, as a turn's does, until package hooks calls release (after
// the request counted what it used, or when it was not sent): requests
// checked meanwhile (a subagent's beside it, another session's against
// the day) count it.
func (a hookAsker) allow(ctx context.Context, modelID string, about int64) (func(), error) {
	release, err := a.t.withinLimitsFor(ctx, modelID, about)
	if err != nil {
		var ls limitStop
		if errors.As(err, &ls) {
			return nil, fmt.Errorf("a spend limit: %w", err)
		}
		return nil, err
	}
	return release, nil
}

// Send sends the request and counts its usage, also when it failed after
// the service reported some.
func (a hookAsker) Send(ctx context.Context, q hooks.PromptRequest) (string, error) {
	t := a.t
	cfg, client := a.target(q)
	// the prompt's text is the person's (or the project's) and the
	// conversation's: not for kin's log at info level
	t.svc.log.Debug("prompt hook", zap.String("session", t.sess.id), zap.String("event", string(q.Hook.Event)), zap.String("model", cfg.Model))
	resp, u, err := oneShot(ctx, client, q.Instructions, a.effortFor(cfg), q.Text, t.modelNotice)
	a.charge(cfg, u, a.about(q), resp, err)
	if err != nil {
		return "", err
	}
	if resp.Refused() {
		return "", errors.New("the model refused to judge it")
	}
	return resp.Text, nil
}

// effortFor is the turn's reasoning effort for a hook's request to cfg:
// none when the hook names another model, which may not take it.
func (a hookAsker) effortFor(cfg model.Config) string {
	if cfg.Model == a.t.cfg.Model {
		return a.t.effort
	}
	return ""
}

// charge counts a hook's request's usage as the turn's, priced as cfg's
// model, also when it failed after the service reported some (about is
// the input it was estimated at): see billed.
func (a hookAsker) charge(cfg model.Config, u model.Usage, about int64, resp *model.Response, err error) {
	if billed(resp) {
		a.t.countUsageAs(cfg.Model, estimated(u, about, answerBytes(resp)))
	}
}

// hookClient is the client of a prompt hook that names a model: the
// service, key and base URL of base (the turn's), that model. Kept apart
// from the catalog's clients, whose entry of the same id may be another
// service's.
func (s *Service) hookClient(base model.Config, modelID string) *model.Client {
	// the service (its API, base URL and key), not the turn's model id:
	// two services may serve models of one id
	key := "hook\x00" + base.API + "\x00" + base.BaseURL + "\x00" + base.APIKey + "\x00" + modelID
	s.cmu.Lock()
	defer s.cmu.Unlock()
	c := s.clients[key]
	if c == nil {
		cfg := base
		cfg.Model = modelID
		c = model.New(cfg, s.opts.HTTPClient)
		s.clients[key] = c
	}
	return c
}
