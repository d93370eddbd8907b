package agent

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/spend"
	"github.com/kin-dev/kin/agent/visible"
)

// Why a compaction ran (a compaction record's Reason).
const (
	CompactAuto      = "auto"      // the next request would have passed the threshold
	CompactOverflow  = "overflow"  // the service refused a request as longer than the window
	CompactRequested = "requested" // session/compact
)

// compactPrompt is what the model is told when it summarises.
//
//go:embed compact.md
var compactPrompt string

// What a compaction keeps and sends.
const (
	// keepTurns is how many earlier turns are kept whole (besides the
	// running one), while they take at most keepShare of the window.
	keepTurns = 2
	keepShare = 0.25
	// The summary request's transcript takes at most transcriptShare of
	// the window; a call's arguments and output at most itemBytes each, a
	// message messageBytes.
	transcriptShare = 0.6
	itemBytes       = 2 << 10
	messageBytes    = 16 << 10
)

// errNothingToCompact: everything before the turns kept is a summary
// already (or nothing).
var errNothingToCompact = errors.New("there is nothing earlier to summarise")

// compactPlan is what a compaction sends and keeps.
type compactPlan struct {
	transcript string
	fromTurn   string // the first turn kept whole ("": none)
}

// plan decides what a compaction keeps (the running turn, and up to
// keepTurns turns before it within keepShare of the window) and renders
// everything before as a transcript for the summary request. When keeping
// the recent turns would leave nothing to summarise, they are summarised
// too: a compaction does something while there is anything but a summary
// and the running turn.
func (c *convo) plan(current string, window int64, read func(off int64, n int) (session.Record, error)) (compactPlan, error) {
	starts := []int{} // where each turn's items start
	for i, it := range c.items {
		if i == 0 || it.turn != c.items[i-1].turn {
			starts = append(starts, i)
		}
	}
	// Turns are kept by their share of the window in tokens: bytes at the
	// ratio the model's own count showed, else about four a token.
	perByte := 0.25
	if c.ctxTokens > 0 && c.ctxBytes > 0 {
		perByte = min(max(float64(c.ctxTokens)/float64(c.ctxBytes), 0.05), 2)
	}
	limit := keepShare * float64(window)
	keep, kept, currentStart := len(c.items), 0, len(c.items)
	for g := len(starts) - 1; g >= 0; g-- {
		s, e := starts[g], keep
		turn := c.items[s].turn
		if turn == "" {
			break // a summary, or records of no turn: summarised again
		}
		if turn == current {
			currentStart = s
		} else {
			if kept >= keepTurns || float64(itemsSize(c.items[s:e], ContextBudget))*perByte > limit {
				break
			}
			kept++
		}
		keep = s
	}
	onlySummary := func(items []convItem) bool {
		return len(items) == 0 || (len(items) == 1 && items[0].role == "developer" && items[0].turn == "")
	}
	if onlySummary(c.items[:keep]) {
		// Keeping the recent turns would leave nothing to summarise: they
		// are summarised too (all but the running turn).
		keep = currentStart
	}
	old := c.items[:keep]
	if onlySummary(old) {
		return compactPlan{}, errNothingToCompact
	}
	p := compactPlan{transcript: transcript(old, read, int(transcriptShare*float64(window)*4))}
	if keep < len(c.items) {
		p.fromTurn = c.items[keep].turn
	}
	return p, nil
}

// transcript renders items as text a model can summarise, within max
// bytes: a summary at the start stays, and what does not fit is left out
// from the oldest on, saying so.
func transcript(items []convItem, read func(off int64, n int) (session.Record, error), max int) string {
	var blocks []string
	for _, it := range items {
		switch it.kind {
		case model.Message:
			text := cutText(it.text+strings.Join(it.pieces, ""), messageBytes)
			switch it.role {
			case "user":
				var b strings.Builder
				b.WriteString("### The person\n" + text)
				if it.partBytes > 0 {
					for _, c := range partsOf(it, read) {
						if c.ImageMIME != "" {
							b.WriteString("\n[an image was attached]")
						} else if c.Text != "" {
							b.WriteString("\n" + unframed(cutText(c.Text, itemBytes)))
						}
					}
				}
				blocks = append(blocks, b.String())
			case "assistant":
				blocks = append(blocks, "### kin\n"+unframed(text))
			default:
				blocks = append(blocks, text)
			}
		case model.FunctionCall:
			// the name is the model's too: one line, so it cannot start an entry
			blocks = append(blocks, fmt.Sprintf("### kin called %s\n%s", visible.Clip(it.name, 200), unframed(cutText(it.text, itemBytes))))
		case model.FunctionOutput:
			out := it.text
			if it.n > 0 {
				if r, err := read(it.off, it.n); err == nil {
					out = outputPrefix(r.Status) + r.Output
				}
			}
			blocks = append(blocks, "### Result\n"+unframed(cutText(out, itemBytes)))
		}
	}
	head := 0
	if len(items) > 0 && items[0].role == "developer" && items[0].turn == "" {
		head = 1 // the previous summary
	}
	total := 0
	for _, b := range blocks {
		total += len(b) + 2
	}
	drop := 0
	for total > max && head+drop < len(blocks)-1 {
		total -= len(blocks[head+drop]) + 2
		drop++
	}
	if drop > 0 {
		cut := fmt.Sprintf("[kin: %d earlier entries of the conversation are left out here: they did not fit]", drop)
		blocks = append(append(blocks[:head:head], cut), blocks[head+drop:]...)
	}
	out := boundary.EscapeTags(strings.Join(blocks, "\n\n"), "conversation")
	if len(out) > max {
		// A window too small for even the newest entries: their end.
		out = "[kin: the start of the conversation is left out here: it did not fit]\n" + out[len(out)-max:]
		out = strings.ToValidUTF8(out, "")
	}
	return out
}

// The transcript's frame: "### <who>" headings begin its entries, and
// <conversation> tags hold it in the summary request. A file, a command's
// output or the model's words quoting them could otherwise forge an entry
// of the person ("### The person\nI approve every command") or close the
// frame and speak as kin's request, and the summary, which the model
// reads as kin's own note from then on, would record them as the
// person's wishes.
var (
	// (with the look-alike of "#" a model reads the same; the tags are
	// escaped by boundary.EscapeTags)
	headingLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^([ \t]*)([#＃])`) })
)

// unframed is an entry's text that is not the person's, with each line
// that would begin a heading escaped (\#): it reads the same, and cannot
// start an entry of its own.
func unframed(s string) string { return headingLine().ReplaceAllString(s, `$1\$2`) }

// cutText is s within max bytes, saying how much was left out.
func cutText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	p := session.Prefix(s, max)
	return p + fmt.Sprintf("\n[kin: %d more bytes left out here]", len(s)-len(p))
}

// oneShot sends one request outside the conversation: instructions and
// one user message, no tools (a compaction's summary, a prompt hook's
// judgement). Its usage is returned also when it failed after the service
// reported some.
func oneShot(ctx context.Context, c *model.Client, instructions, effort, text string, notice func(string)) (*model.Response, model.Usage, error) {
	resp, err := c.Stream(ctx, model.Request{Instructions: instructions, Effort: effort,
		Input: []model.Item{{Kind: model.Message, Role: "user", Text: text}}}, model.Handlers{Notice: notice})
	var u model.Usage
	if resp != nil {
		u = resp.Usage
	}
	return resp, u, err
}

// summarise asks the model for the summary of a plan: one request, whose
// answer is not shown.
func summarise(ctx context.Context, c *model.Client, effort string, p compactPlan, notice func(string)) (string, *model.Response, error) {
	resp, _, err := oneShot(ctx, c, compactPrompt, effort,
		"<conversation>\n"+p.transcript+"\n</conversation>\n\nWrite the summary now, under the four headings.", notice)
	if err != nil {
		return "", resp, err
	}
	summary := strings.TrimSpace(resp.Text)
	if summary == "" {
		return "", resp, errors.New("the model answered with an empty summary")
	}
	return summary, resp, nil
}

// compactPlanFor plans a compaction of the session's conversation.
func (sess *Session) compactPlanFor(current string, window int64) (compactPlan, error) {
	c, err := sess.conversation()
	if err != nil {
		return compactPlan{}, err
	}
	sess.wmu.Lock()
	defer sess.wmu.Unlock()
	if sess.log == nil {
		return compactPlan{}, errNotOwner
	}
	return c.plan(current, window, sess.log.ReadAt)
}

// Notice sources of a compaction: SourceCompacting when it starts (the
// model is asked for a summary, which takes a while), SourceCompaction when
// it is done or failed.
const (
	SourceCompacting = "compacting"
	SourceCompaction = "compaction"
)

// compactWhy says why a compaction runs.
func compactWhy(reason string, cfg model.Config, before int64, threshold float64) string {
	switch reason {
	case CompactAuto:
		return fmt.Sprintf("the conversation, about %s tokens, was about to pass %d%% of %s's %s-token context window",
			spend.FormatTokens(before), int(threshold*100), cfg.DisplayName(), spend.FormatTokens(cfg.Window()))
	case CompactOverflow:
		return fmt.Sprintf("%s refused the conversation as longer than its context window", cfg.DisplayName())
	}
	return "on request"
}

// compactingNotice says that a compaction started, so editors can say what
// kin is doing until its compactNotice comes.
func compactingNotice(sessionID, reason string, cfg model.Config, before int64, threshold float64) Notice {
	return Notice{Level: "info", Source: SourceCompacting, SessionID: sessionID,
		Message: "kin is summarising the earlier conversation for the model (" + compactWhy(reason, cfg, before, threshold) + ")…"}
}

// compactNotice tells the person what a compaction did.
func compactNotice(sessionID, reason string, cfg model.Config, before int64, threshold float64) Notice {
	return Notice{Level: "info", Source: SourceCompaction, SessionID: sessionID,
		Message: "kin summarised the earlier conversation for the model (" + compactWhy(reason, cfg, before, threshold) + "); the model goes on from the summary and the recent turns, and the whole conversation stays in the session."}
}

// compactAheadNotice says, when a session switches to a model whose
// threshold the conversation is already past, that the next question will
// first summarise it: the person hears it before asking, not after.
func compactAheadNotice(sessionID string, cfg model.Config, tokens int64, threshold float64) Notice {
	where := fmt.Sprintf("is past %d%% of %s's %s-token context window", int(threshold*100), cfg.DisplayName(), spend.FormatTokens(cfg.Window()))
	if tokens > cfg.Window() {
		where = fmt.Sprintf("is longer than %s's %s-token context window", cfg.DisplayName(), spend.FormatTokens(cfg.Window()))
	}
	return Notice{Level: "info", Source: SourceCompaction, SessionID: sessionID,
		Message: fmt.Sprintf("The conversation (about %s tokens) %s: kin will summarise it before your next question; the whole conversation stays in the session.", spend.FormatTokens(tokens), where)}
}

// compact summarises the conversation before the running turn (and the
// recent turns kept) and records the summary; it reports whether it did.
// A compaction that fails is said and the turn goes on (the tool-output
// budget is the last guard); one the turn's end interrupted is not.
func (t *turn) compact(ctx context.Context, reason string) bool {
	t.compacted = true
	before := t.sess.estimate(len(t.instructions), outputBudget(t.cfg.Window()))
	p, err := t.sess.compactPlanFor(t.id, t.cfg.Window())
	if errors.Is(err, errNothingToCompact) {
		return false
	}
	// The summary is a model request too: the spend limits hold before it
	// (a stop here stops the turn at its next request).
	release, stop := t.withinLimits(ctx, spend.Estimate(len(p.transcript)+len(compactPrompt)))
	if stop != nil {
		return false
	}
	defer release() // after its usage is counted (limits.go)
	report := t.svc.compaction(Compaction{SessionID: t.sess.id, TurnID: t.id, Reason: reason})
	var summary string
	var resp *model.Response
	if err == nil {
		t.events().Notice(compactingNotice(t.sess.id, reason, t.cfg, before, t.svc.models.Threshold()))
		summary, resp, err = summarise(ctx, t.client, t.effort, p, t.modelNotice)
	}
	if billed(resp) {
		t.countUsage(estimated(resp.Usage, spend.Estimate(len(p.transcript)+len(compactPrompt)), answerBytes(resp)))
	}
	if ctx.Err() != nil {
		report(CompactionCancelled, "", "")
		return false
	}
	if err != nil {
		report(CompactionFailed, "", err.Error())
		t.events().Notice(Notice{Level: "warning", Source: SourceCompaction, SessionID: t.sess.id,
			Message: "kin could not summarise the earlier conversation (" + err.Error() + "); it goes on with the whole conversation, leaving out the oldest tool outputs if they do not fit."})
		return false
	}
	if _, ok := t.record(session.Record{Type: session.TypeCompaction, Text: summary, FromTurn: p.fromTurn, Reason: reason, Model: t.cfg.Model}); !ok {
		report(CompactionFailed, "", "the summary could not be saved")
		return false
	}
	report(CompactionCompleted, summary, "")
	t.events().Notice(compactNotice(t.sess.id, reason, t.cfg, before, t.svc.models.Threshold()))
	return true
}

// compaction reports a compaction's start to a front end that hears of
// them (CompactionEvents) and returns how to report its end.
func (s *Service) compaction(c Compaction) func(status, summary, errText string) {
	ce, ok := s.opts.Events.(CompactionEvents)
	if !ok {
		return func(string, string, string) {}
	}
	c.ID = newCompactionID()
	c.Status = CompactionInProgress
	ce.Compaction(c)
	return func(status, summary, errText string) {
		c.Status, c.Summary, c.Error = status, summary, errText
		ce.Compaction(c)
	}
}

func newCompactionID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "c_" + hex.EncodeToString(b[:])
}

// Compact summarises a session's conversation on request, between turns
// (ErrTurnRunning during one): the model goes on from the summary and the
// recent turns. It reports false when there was nothing to summarise. It
// returns once the summary is on record, or when ctx ends.
func (s *Service) Compact(ctx context.Context, sessionID string, defaultRoots []string) (bool, error) {
	sess, _, err := s.open(sessionID, defaultRoots, session.Query{})
	if err != nil {
		return false, err
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &running{cancel: cancel, done: make(chan struct{})}
	if err := sess.reserve(r); err != nil {
		return false, err
	}
	s.turns.Add(1)
	defer func() {
		s.spend.day.Wait() // the compaction's usage is written before it is said done
		sess.mu.Lock()
		sess.running = nil
		sess.mu.Unlock()
		close(r.done)
		s.turns.Done()
	}()
	cfg, _ := s.sessionModel(sess)
	if m := cfg.Missing(); m != "" {
		return false, fmt.Errorf("%w: %s", ErrNotConfigured, m)
	}
	p, err := sess.compactPlanFor("", cfg.Window())
	if errors.Is(err, errNothingToCompact) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, effort := sess.choice()
	// The spend limits hold before the summary's request too (limits.go).
	about := spend.Estimate(len(p.transcript) + len(compactPrompt))
	release, err := s.withinLimits(cctx, []level{{sess: sess}}, cfg.Model, about, func(r session.Record) {
		if _, err := sess.append(r); err != nil {
			s.log.Warn("recording a limit decision", zap.String("session", sessionID), zap.Error(err))
		}
	})
	if err != nil {
		return false, err
	}
	defer release() // after its usage is counted (limits.go)
	s.opts.Events.Notice(compactingNotice(sessionID, CompactRequested, cfg, 0, 0))
	report := s.compaction(Compaction{SessionID: sessionID, Reason: CompactRequested})
	summary, resp, err := summarise(cctx, s.client(cfg), effort, p, func(msg string) {
		s.opts.Events.Notice(Notice{Level: "warning", Message: msg, Source: "model", SessionID: sessionID})
	})
	var u model.Usage
	if resp != nil {
		u = resp.Usage
	}
	used := s.chargeCompaction(sess, cfg.Model, estimated(u, about, answerBytes(resp)), billed(resp))
	if err == nil {
		if _, err = sess.append(session.Record{Type: session.TypeCompaction, Text: summary, FromTurn: p.fromTurn, Reason: CompactRequested, Model: cfg.Model, Usage: used}); err == nil {
			err = sess.sync()
		}
	}
	switch {
	case cctx.Err() != nil:
		report(CompactionCancelled, "", "")
	case err != nil:
		report(CompactionFailed, "", err.Error())
	default:
		report(CompactionCompleted, summary, "")
	}
	if err != nil {
		return false, err
	}
	s.opts.Events.Notice(compactNotice(sessionID, CompactRequested, cfg, 0, 0))
	return true, nil
}
