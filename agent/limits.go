package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/settings"
	"github.com/kin-dev/kin/agent/spend"
)

// Spend limits (package spend does the arithmetic and keeps the day's
// ledger): before every model request of a turn (its answers, its
// compaction summaries, its subagents' requests) and before a compaction
// on request, kin checks the person's limits against what was used plus
// the request's estimated input, and asks the person (approval kind
// "limit") before passing one. What a request used is counted once, from
// the service's report (kin's estimate where there is none): into the day,
// the session that made it and every session it works for (a subagent's
// parents), and, through addSubagentUsage, every turn it works for.
//
// A request on its way holds its estimated input against every limit it
// counts towards (its turn and the turns it works for, their sessions,
// the day) until its usage is counted: requests that go at once (the
// subagents of one answer run side by side) each see the others', so
// together they cannot pass a limit that each alone fits under without
// the person being asked. The check and the hold are one step (hold);
// against the day's limits it is one step for every kin on the KIN_HOME
// (spend.Day.Hold records the hold in the day's ledger; spend.Day.Release
// lets it go with the request's usage, in one write: addDay).

// spending is the service's spend state.
type spending struct {
	cfg spend.Config
	// bad says the settings' limits are not valid: no request is sent
	// until they are fixed.
	bad   error
	day   *spend.Day
	store *session.Store
	log   *zap.Logger

	// hold makes a request's check and the hold of its estimate one step:
	// two requests checked at once would each pass without the other's.
	hold sync.Mutex

	// mu guards sessions and dayHeld.
	mu       sync.Mutex
	sessions map[string]*sessionSpend
	// dayHeld is what this kin's requests on their way hold against the
	// day's limits.
	dayHeld spend.Tally
}

// sessionSpend is one session's spend in this process.
type sessionSpend struct {
	// asking lets one limit question at a time be asked for a session and
	// the subagents working for it.
	asking chan struct{}

	// mu guards the fields below.
	mu     sync.Mutex
	loaded bool
	total  spend.Tally
	// held is what the requests on their way for this session (its own,
	// its subagents') hold against its limits.
	held spend.Tally
	// raised are the limits the person raised for this session, by name.
	raised map[string]float64
	// said are the notes already given once in this session (unpriced,
	// estimated, a ledger not written).
	said map[string]bool
	// dayHolds counts the session's requests on their way whose hold is
	// in the day's ledger; unwritten is what its requests used meanwhile,
	// added to the day with the next of those holds' release (addDay).
	dayHolds  int
	unwritten spend.Tally
}

// turnLimits is what the person decided in a turn (guarded by turn.mu).
type turnLimits struct {
	// waived are the limits the person let this turn pass, by name.
	waived map[string]bool
	// stop is why the turn stops at a limit: every later request of it
	// (and of the turns it works for) is not sent.
	stop error
	// held is what the requests on their way for this turn (its own, its
	// subagents') hold against its limits.
	held spend.Tally
}

func newSpending(home string, l settings.Limits, store *session.Store, log *zap.Logger) *spending {
	cfg, err := spend.NewConfig(l)
	return &spending{cfg: cfg, bad: err, day: spend.OpenDay(home, nil), store: store, log: log, sessions: map[string]*sessionSpend{}}
}

// active reports whether any limit is set (or the settings are bad).
func (sp *spending) active() bool { return sp.bad != nil || len(sp.cfg.Limits("")) > 0 }

// of is a session's spend, its total read from its log on first use: the
// turns' usage (each counts its subagents') and compactions on request.
func (sp *spending) of(id string) *sessionSpend {
	sp.mu.Lock()
	ss := sp.sessions[id]
	if ss == nil {
		ss = &sessionSpend{asking: make(chan struct{}, 1), raised: map[string]float64{}, said: map[string]bool{}}
		sp.sessions[id] = ss
	}
	sp.mu.Unlock()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !ss.loaded {
		ss.loaded = true
		t, err := sp.sessionTotal(id)
		if err != nil {
			sp.log.Warn("reading a session's usage", zap.String("session", id), zap.Error(err))
		}
		ss.total = t
	}
	return ss
}

// sessionTotal sums what a session's log says it used, reading it a record
// at a time (a log can be many MB of tool outputs, none of which counts).
func (sp *spending) sessionTotal(id string) (spend.Tally, error) {
	var t spend.Tally
	rd, err := sp.store.Reader(id)
	if err != nil {
		return t, err
	}
	defer rd.Close()
	err = rd.Each(-1, func(r session.Record, _ int64) error {
		if r.Usage == nil || !(r.Type == session.TypeTurn || (r.Type == session.TypeCompaction && r.TurnID == "")) {
			return nil
		}
		u := r.Usage
		t.Add(spend.Tally{InputTokens: u.InputTokens, CachedInputTokens: u.CachedInputTokens, OutputTokens: u.OutputTokens,
			Cost: u.Cost, Estimated: u.Estimated, Unpriced: u.Unpriced})
		return nil
	})
	return t, err
}

func (ss *sessionSpend) add(c spend.Tally) spend.Tally {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.total.Add(c)
	return ss.total
}

func (ss *sessionSpend) get() spend.Tally {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.total
}

// counted is what the session's limits count: what it used and what its
// requests on their way hold.
func (ss *sessionSpend) counted() (used, held spend.Tally) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.total, ss.held
}

// max is a limit as it holds for the session (raised or not).
func (ss *sessionSpend) max(l spend.Limit) float64 {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if v, ok := ss.raised[l.Name()]; ok {
		return v
	}
	return l.Max
}

// once reports whether key is said for the first time in the session.
func (ss *sessionSpend) once(key string) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.said[key] {
		return false
	}
	ss.said[key] = true
	return true
}

// estimated is u, or kin's estimate of it when the service reported none
// for a request that sent about input tokens and got out bytes back.
func estimated(u model.Usage, input int64, out int) model.Usage {
	if u.InputTokens != 0 || u.OutputTokens != 0 {
		return u
	}
	return model.Usage{InputTokens: input, OutputTokens: spend.Estimate(out), Estimated: true}
}

// billed reports whether a request counts: the service reported what it
// used, or it took the request (it ran, and is billed, even when the answer
// failed, was cancelled or stopped short of its end), when kin's estimate
// counts. A request that was refused or never reached the service counts
// nothing.
func billed(resp *model.Response) bool {
	return resp != nil && (resp.Usage != (model.Usage{}) || resp.Accepted)
}

// answerBytes is how much a response brought back (what an estimate of its
// output tokens counts).
func answerBytes(r *model.Response) int {
	if r == nil {
		return 0
	}
	n := len(r.Text)
	for _, c := range r.Calls {
		n += len(c.Name) + len(c.Arguments)
	}
	for _, x := range r.Reasoning {
		for _, s := range x.Summary {
			n += len(s)
		}
	}
	return n
}

// charge counts what one request of the turn used: into the day's ledger,
// this session and every session the turn works for. It returns the
// request's tally, which countUsage adds to the turn (and, through
// addSubagentUsage, to the turns it works for).
func (t *turn) charge(u model.Usage) spend.Tally { return t.chargeAs(t.cfg.Model, u) }

// chargeAs is charge for a request to modelID, which may not be the
// turn's (a prompt hook that names its model): priced as that model.
func (t *turn) chargeAs(modelID string, u model.Usage) spend.Tally {
	sp := t.svc.spend
	c := sp.cfg.Charge(modelID, u.InputTokens, u.CachedInputTokens, u.OutputTokens, u.Estimated)
	if c.Tokens() == 0 {
		return c
	}
	for p := t; p != nil; p = p.parent {
		sp.of(p.sess.id).add(c)
	}
	ss := sp.of(t.sess.id)
	if err := sp.addDay(ss, c); err != nil {
		t.ledgerFailed(err)
	}
	if c.Unpriced && sp.cfg.HasCostLimits() && ss.once("unpriced:"+modelID) {
		t.events().Notice(Notice{Level: "warning", Source: "limits", SessionID: t.sess.id,
			Message: fmt.Sprintf("The model %s has no price in settings.json limits.prices: the cost limits do not count its requests (the token limits do).", modelID)})
	}
	if c.Estimated && ss.once("estimated") {
		t.events().Notice(Notice{Level: "info", Source: "limits", SessionID: t.sess.id,
			Message: "The model service reported no token usage: kin counts its own estimate (about 4 bytes a token) for this session's usage and limits."})
	}
	return c
}

// ledgerFailed logs that the day's usage could not be written, and says
// so once in the session.
func (t *turn) ledgerFailed(err error) {
	t.svc.spend.log.Warn("adding to the day's usage", zap.Error(err))
	if t.svc.spend.of(t.sess.id).once("ledger") {
		t.events().Notice(Notice{Level: "warning", Source: "limits", SessionID: t.sess.id,
			Message: "kin could not add this request to the day's usage (" + err.Error() + ")."})
	}
}

// addDay adds a request's tally c to the day's usage. While the session
// has a request whose hold is in the day's ledger (the one that used c:
// it is charged before its hold is let go), c waits for the next of
// those holds to be let go and is written with it (spend.Day.Release):
// one write of the ledger, and no moment where another kin counts c and
// the hold both (asked too early) or neither (room that is not there).
func (sp *spending) addDay(ss *sessionSpend, c spend.Tally) error {
	ss.mu.Lock()
	if ss.dayHolds > 0 {
		ss.unwritten.Add(c)
		ss.mu.Unlock()
		return nil
	}
	ss.mu.Unlock()
	return sp.day.Add(c)
}

// letGoDay is one of the session's day holds let go: what its requests
// used meanwhile, to be written with it (addDay).
func (ss *sessionSpend) letGoDay() spend.Tally {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.dayHolds--
	used := ss.unwritten
	ss.unwritten = spend.Tally{}
	return used
}

// addSpend adds a request's tally to the turn's usage, and the session's
// totals as they are now (t.mu held).
func (t *turn) addSpend(c spend.Tally) {
	sp := t.svc.spend
	t.usage.CachedInputTokens += c.CachedInputTokens
	t.usage.Cost += c.Cost
	t.usage.Estimated = t.usage.Estimated || c.Estimated
	t.usage.Unpriced = t.usage.Unpriced || c.Unpriced
	if sp.cfg.Priced(t.cfg.Model) || t.usage.Cost > 0 {
		t.usage.Currency = sp.cfg.Currency()
	}
	total := sp.of(t.sess.id).get()
	t.usage.SessionTokens, t.usage.SessionCost = total.Tokens(), total.Cost
}

// limitStop is why a turn stopped at a spend limit.
type limitStop struct{ msg string }

func (e limitStop) Error() string { return e.msg }

// endedBy is the status of a turn whose model request failed with err.
func endedBy(err error) string {
	var ls limitStop
	if errors.As(err, &ls) {
		return TurnLimit
	}
	return TurnFailed
}

// level is one session whose limits a request counts against: the
// session making it, then each session it works for. t is the turn
// running there (nil for a compaction on request).
type level struct {
	sess *Session
	t    *turn
}

// crossing is a limit the next request would pass, and where.
type crossing struct {
	spend.Crossing
	at level // whose turn or session the limit is ("day": the person's session)
}

// withinLimits is the check before each model request of the turn: input
// is the request's estimated input tokens. It returns the request's hold
// when it may be sent (release it once the request's usage is counted, or
// when it is not sent after all), else the error the turn stops with.
func (t *turn) withinLimits(ctx context.Context, input int64) (release func(), err error) {
	return t.withinLimitsFor(ctx, t.cfg.Model, input)
}

// withinLimitsFor is withinLimits for a request to modelID (a prompt
// hook's may name its own).
func (t *turn) withinLimitsFor(ctx context.Context, modelID string, input int64) (func(), error) {
	var levels []level
	for p := t; p != nil; p = p.parent {
		if err := p.stopped0(); err != nil {
			return nil, err
		}
		levels = append(levels, level{p.sess, p})
	}
	release, err := t.svc.withinLimits(ctx, levels, modelID, input, func(r session.Record) { t.record(r) })
	// Only a limit's stop is every level's: the asking turn's context
	// ending (a subagent's session cancelled while its limit question
	// waited) stops that turn alone, and its parent goes on.
	if ls := (limitStop{}); errors.As(err, &ls) {
		for p := t; p != nil; p = p.parent {
			p.mu.Lock()
			if p.limits.stop == nil {
				p.limits.stop = err
			}
			p.mu.Unlock()
		}
	}
	return release, err
}

func (t *turn) stopped0() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.limits.stop
}

// withinLimits checks the limits of levels (the asking session first)
// before a request to modelID of about input tokens, asking the person at
// each limit it would pass; record keeps each decision in the asking
// session. When the request may go, its estimate is held against every
// level's limits and the day's until release is called.
func (s *Service) withinLimits(ctx context.Context, levels []level, modelID string, input int64, record func(session.Record)) (release func(), err error) {
	sp := s.spend
	if !sp.active() {
		return func() {}, nil
	}
	if sp.bad != nil {
		return nil, limitStop{sp.bad.Error() + "; kin sends no model request until this is fixed."}
	}
	next := spend.Tally{InputTokens: input, Cost: sp.cfg.InputCost(modelID, input)}
	root := sp.of(levels[len(levels)-1].sess.id)
	once := map[string]bool{} // "continue" where no turn keeps it (a compaction on request)
	for {
		release, c, err := s.holdWithin(levels, next, once)
		if err != nil || c == nil {
			return release, err
		}
		// One question at a time for a session and its subagents; once
		// this one may ask, what is crossed is looked at again (another
		// question may have settled it, or a request on its way ended).
		select {
		case root.asking <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		c, err = s.crossing(levels, next, once)
		if err != nil || c == nil {
			<-root.asking
			if err != nil {
				return nil, err
			}
			continue // hold it (holdWithin), unless another request took the room meanwhile
		}
		err = s.askLimit(ctx, levels[0], *c, record, once)
		<-root.asking
		if err != nil {
			return nil, err
		}
	}
}

// holdWithin is one step: the first limit the next request would pass
// (with what the requests on their way hold), or, when it passes none,
// the request's own hold on each level, the day included, and how to let
// it go (once; later calls do nothing).
func (s *Service) holdWithin(levels []level, next spend.Tally, once map[string]bool) (func(), *crossing, error) {
	sp := s.spend
	sp.hold.Lock()
	defer sp.hold.Unlock()
	if c := s.levelCrossing(levels, next, once); c != nil {
		return nil, c, nil
	}
	day := sp.cfg.Limits(spend.ScopeDay)
	inLedger := false // the day's hold is recorded (spend.Day.Hold), to be let go
	if len(day) > 0 {
		// The day's limits count every kin on this KIN_HOME (another
		// editor window's): the check against what they hold and this
		// request's hold are one step under the ledger's lock, one read
		// of the ledger.
		root := levels[len(levels)-1]
		var dc *crossing
		fit, err := sp.day.Hold(next, func(used, others spend.Tally) bool {
			dc = s.dayCrossing(root, day, next, once, used, s.heldToday(others))
			return dc == nil
		})
		switch {
		case err != nil:
			// This kin's hold could not be written in the ledger (a
			// read-only KIN_HOME): the check is made against the ledger as
			// read (a ledger that cannot be read stops the request), the
			// other kins do not see the hold, as before holds were
			// recorded, and the request goes as that check allows.
			if c, rerr := s.dayCrossingNow(levels, next, once); rerr != nil || c != nil {
				return nil, c, rerr
			}
			sp.log.Warn("recording a request on its way in the day's usage", zap.Error(err))
		case !fit:
			return nil, dc, nil
		default:
			inLedger = true
		}
	}
	change := func(add bool) {
		apply := func(t *spend.Tally) {
			if add {
				t.Add(next)
			} else {
				t.Unhold(next)
			}
		}
		for _, at := range levels {
			if at.t != nil {
				at.t.mu.Lock()
				apply(&at.t.limits.held)
				at.t.mu.Unlock()
			}
			ss := sp.of(at.sess.id)
			ss.mu.Lock()
			apply(&ss.held)
			ss.mu.Unlock()
		}
		sp.mu.Lock()
		apply(&sp.dayHeld)
		sp.mu.Unlock()
	}
	change(true)
	asker := sp.of(levels[0].sess.id)
	if inLedger {
		asker.mu.Lock()
		asker.dayHolds++
		asker.mu.Unlock()
	}
	var done sync.Once
	return func() {
		done.Do(func() {
			// the day's usage is added before this kin's count of the hold
			// goes (change): for a moment both count, never neither
			if inLedger {
				if err := sp.day.Release(next, asker.letGoDay()); err != nil {
					if t := levels[0].t; t != nil {
						t.ledgerFailed(err)
					} else {
						sp.log.Warn("adding to the day's usage", zap.Error(err))
					}
				}
			}
			change(false)
		})
	}, nil, nil
}

// crossing is the first limit the next request would pass that nobody
// waived (nil: none).
func (s *Service) crossing(levels []level, next spend.Tally, once map[string]bool) (*crossing, error) {
	if c := s.levelCrossing(levels, next, once); c != nil {
		return c, nil
	}
	return s.dayCrossingNow(levels, next, once)
}

// levelCrossing is crossing for the limits of the turns and sessions of
// levels (the day's apart).
func (s *Service) levelCrossing(levels []level, next spend.Tally, once map[string]bool) *crossing {
	sp := s.spend
	for _, at := range levels {
		if at.t != nil {
			at.t.mu.Lock()
			used := spend.Tally{InputTokens: at.t.usage.InputTokens, OutputTokens: at.t.usage.OutputTokens, Cost: at.t.usage.Cost}
			held := at.t.limits.held
			at.t.mu.Unlock()
			for _, l := range sp.cfg.Limits(spend.ScopeTurn) {
				if c := s.checkLimit(at, l, next, once, used, held); c != nil {
					return c
				}
			}
		}
		used, held := sp.of(at.sess.id).counted()
		for _, l := range sp.cfg.Limits(spend.ScopeSession) {
			if c := s.checkLimit(at, l, next, once, used, held); c != nil {
				return c
			}
		}
	}
	return nil
}

// dayCrossingNow is crossing for the day's limits, against the ledger as
// it is now (no hold is taken: holdWithin checks and holds in one step).
func (s *Service) dayCrossingNow(levels []level, next spend.Tally, once map[string]bool) (*crossing, error) {
	day := s.spend.cfg.Limits(spend.ScopeDay)
	if len(day) == 0 {
		return nil, nil
	}
	_, used, others, err := s.spend.day.TodayHeld()
	if err != nil {
		return nil, limitStop{err.Error() + "; kin sends no model request while it cannot count the day's usage."}
	}
	return s.dayCrossing(levels[len(levels)-1], day, next, once, used, s.heldToday(others)), nil
}

// heldToday is what the requests on their way hold today: this kin's and
// others, what the other kins' hold.
func (s *Service) heldToday(others spend.Tally) spend.Tally {
	s.spend.mu.Lock()
	held := s.spend.dayHeld
	s.spend.mu.Unlock()
	held.Add(others)
	return held
}

// dayCrossing is the first of the day's limits the next request would
// pass that nobody waived, with what every kin used and holds today.
func (s *Service) dayCrossing(root level, day []spend.Limit, next spend.Tally, once map[string]bool, used, held spend.Tally) *crossing {
	for _, l := range day {
		if c := s.checkLimit(root, l, next, once, used, held); c != nil {
			return c
		}
	}
	return nil
}

// checkLimit is l when the next request would pass it at the level at
// and nobody waived it there; used is what the scope used, held what its
// requests on their way hold (holdWithin).
func (s *Service) checkLimit(at level, l spend.Limit, next spend.Tally, once map[string]bool, used, held spend.Tally) *crossing {
	if s.waived(at, l.Name(), once) {
		return nil
	}
	l.Max = s.spend.of(at.sess.id).max(l)
	if c, over := spend.CrossHeld(l, l.Used(used), l.Used(held), l.Used(next)); over {
		return &crossing{Crossing: c, at: at}
	}
	return nil
}

// waived reports whether the person let the level pass the limit name.
func (s *Service) waived(at level, name string, once map[string]bool) bool {
	if at.t == nil {
		return once[name]
	}
	at.t.mu.Lock()
	defer at.t.mu.Unlock()
	return at.t.limits.waived[name]
}

// askLimit asks the person at a limit, from the session about to make the
// request, and applies the answer: continue (this turn may pass the
// limit), raise (the session's limit is raised), or stop (an error).
func (s *Service) askLimit(ctx context.Context, asker level, c crossing, record func(session.Record), once map[string]bool) error {
	sp := s.spend
	cur := sp.cfg.Currency()
	title := c.Title(cur)
	original := c.Max
	for _, l := range sp.cfg.Limits(c.Scope) {
		if l.Name() == c.Name() {
			original = l.Max
		}
	}
	raised := c.Raised(original)
	gate := s.opts.Gate
	if gate == nil {
		return limitStop{fmt.Sprintf("kin stopped before the next model request: %s, and nobody could be asked whether to go on. Raise limits.%s in $KIN_HOME/settings.json to go on.", lower(title), c.Name())}
	}
	turnID := ""
	if asker.t != nil {
		turnID = asker.t.id
	}
	detail := fmt.Sprintf("Continue this turn: it may pass this limit until it ends. Raise: the limit is %s for this session (settings.json is not changed). Stop: the turn ends now, and nothing more is sent.", c.Amount(raised, cur))
	if c.Scope == spend.ScopeDay {
		detail += " The day's usage counts every kin on this computer."
	}
	req := permission.LimitRequest(asker.sess.id, turnID, title, detail, c.Amount(raised, cur))
	req.Parent = asker.sess.parentRef()
	out := gate.Ask(ctx, req)
	record(session.Record{Type: session.TypeDecision, RequestID: out.RequestID, ApprovalKind: req.Kind,
		Decision: out.Decision, Reason: out.Reason, Title: req.Title})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	switch out.Decision {
	case permission.AllowOnce:
		if c.at.t == nil {
			once[c.Name()] = true
			return nil
		}
		c.at.t.mu.Lock()
		if c.at.t.limits.waived == nil {
			c.at.t.limits.waived = map[string]bool{}
		}
		c.at.t.limits.waived[c.Name()] = true
		c.at.t.mu.Unlock()
		return nil
	case permission.AllowAlways:
		ss := sp.of(c.at.sess.id)
		ss.mu.Lock()
		ss.raised[c.Name()] = raised
		ss.mu.Unlock()
		return nil
	}
	if out.Reason == permission.ReasonPerson {
		return limitStop{fmt.Sprintf("kin stopped before the next model request at your spend limit: %s. Raise limits.%s in $KIN_HOME/settings.json, or ask again to be asked again.", lower(title), c.Name())}
	}
	return limitStop{fmt.Sprintf("kin stopped before the next model request: %s, and nobody answered whether to go on (%s). Raise limits.%s in $KIN_HOME/settings.json to go on.", lower(title), out.Reason, c.Name())}
}

// lower starts s with a small letter (a title within a sentence).
func lower(s string) string {
	if s == "" {
		return s
	}
	if s[0] >= 'A' && s[0] <= 'Z' {
		return string(s[0]+'a'-'A') + s[1:]
	}
	return s
}

// chargeCompaction counts a compaction on request (no turn counts it) into
// the session and the day, and returns what its record keeps (so a later
// kin sums it into the session's usage). A request that is not billed
// (ok false: see billed) counts nothing.
func (s *Service) chargeCompaction(sess *Session, modelID string, u model.Usage, ok bool) *session.Usage {
	if !ok {
		return nil // refused, or never reached the service: nothing to count
	}
	sp := s.spend
	c := sp.cfg.Charge(modelID, u.InputTokens, u.CachedInputTokens, u.OutputTokens, u.Estimated)
	if c.Tokens() == 0 {
		return nil
	}
	ss := sp.of(sess.id)
	ss.add(c)
	if err := sp.addDay(ss, c); err != nil {
		s.log.Warn("adding to the day's usage", zap.Error(err))
	}
	return &session.Usage{InputTokens: c.InputTokens, OutputTokens: c.OutputTokens, CachedInputTokens: c.CachedInputTokens,
		Cost: c.Cost, Estimated: c.Estimated, Unpriced: c.Unpriced}
}

// spendTotals puts the session's totals on the turn's usage (the editors'
// gauges show them), also for a turn that made no request.
func (t *turn) spendTotals() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.addSpend(spend.Tally{})
}

// LimitState is one limit as it holds for a scope: its name in
// settings.json, its maximum (raised for the session, if it was) and what
// is used of it.
type LimitState struct {
	Name      string
	Max, Used float64
}

// UsageSummary is what a session, or today, used (usage/summary).
type UsageSummary struct {
	Scope     string // spend.ScopeSession or spend.ScopeDay
	SessionID string
	Date      string // the day's date (scope day)
	Tally     spend.Tally
	// Currency is what Cost is in ("" when no model has a price).
	Currency string
	Limits   []LimitState
}

// UsageSummary reports a session's usage (every turn, its subagents', its
// compactions) or the day's (every kin on this computer), with the limits
// over that scope.
func (s *Service) UsageSummary(sessionID, scope string) (UsageSummary, error) {
	sp := s.spend
	out := UsageSummary{Scope: scope}
	var ss *sessionSpend
	switch scope {
	case spend.ScopeSession:
		if sessionID == "" {
			return out, fmt.Errorf("%w: sessionId is required for the scope session", ErrBadParams)
		}
		if !s.store.Exists(sessionID) {
			return out, fmt.Errorf("%w: %s", ErrSessionNotFound, sessionID)
		}
		ss = sp.of(sessionID)
		out.SessionID, out.Tally = sessionID, ss.get()
	case spend.ScopeDay:
		date, t, err := sp.day.Today()
		if err != nil {
			return out, err
		}
		out.Date, out.Tally = date, t
		if sessionID != "" && s.store.Exists(sessionID) {
			ss = sp.of(sessionID) // its raises show
		}
	default:
		return out, fmt.Errorf("%w: scope must be session or day, not %q", ErrBadParams, scope)
	}
	if out.Tally.Cost > 0 || sp.hasPrices() {
		out.Currency = sp.cfg.Currency()
	}
	for _, l := range sp.cfg.Limits(scope) {
		max := l.Max
		if ss != nil {
			max = ss.max(l)
		}
		out.Limits = append(out.Limits, LimitState{Name: l.Name(), Max: max, Used: l.Used(out.Tally)})
	}
	return out, nil
}

// hasPrices reports whether any model has a price.
func (sp *spending) hasPrices() bool { return sp.cfg.HasPrices() }
