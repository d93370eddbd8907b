package agent

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/agent/visible"
)

// ContextBudget bounds how many bytes of tool output the model is sent per
// request (less for a small window: see outputBudget). Every call's result
// counts toward it (built-in and MCP alike); when a long session goes over,
// the oldest outputs are replaced by a note telling the model what was left
// out, newest first kept, and the conversation's text is never dropped.
// Compaction keeps a session far below it; the budget is the last guard.
const ContextBudget = 384 << 10

// outputBudget is the tool-output budget for a window of tokens: at most
// three bytes per token of the window (a token is about four), so outputs
// alone never fill a small window.
func outputBudget(window int64) int {
	if b := 3 * window; b > 0 && b < ContextBudget {
		return int(b)
	}
	return ContextBudget
}

// imageBytes is what an image counts for when kin estimates a request's
// size: about the thousand tokens a model charges for one, not its base64.
const imageBytes = 4000

// convo is what the model is sent, rebuilt from a session's records and
// kept compactly: messages and call arguments in memory, but of each tool
// output (and each question with parts) only its length and where its
// record lies in the log. They are read back when a request needs them,
// outputs newest first and only up to the budget, so a long session's
// outputs never all sit in memory. A compaction record replaces what came
// before the turn it keeps with its summary.
type convo struct {
	items    []convItem
	answered map[string]bool
	// tasks names the MCP task each call that became one runs as (a
	// restarted kin may still be following it: see taskresume.go).
	tasks map[string]string
	// unknown lists calls that ended unknown since the last acknowledgement.
	unknown []session.Unknown
	// For the note on a turn that ended without an answer.
	asked, answered1 bool
	// instr are the instructions files the latest instructions record
	// named (nil before the first).
	instr []session.InstructionFile
	// ctxTokens is how many tokens the model last said the context held,
	// when the conversation was ctxBytes long (0: not known since the
	// last compaction).
	ctxTokens int64
	ctxBytes  int
	// textBytes and outBytes are the items' sizes (see itemSize), kept as
	// items come so that a size costs nothing.
	textBytes, outBytes int
	// turns are the turns whose question the model still sees whole,
	// oldest first: what turn/rollback may take out (branching_convo.go);
	// copied are those a fork copied from forkedFrom (their checkpoints
	// are the original session's).
	turns      []string
	copied     map[string]bool
	forkedFrom string
	// rolled are the turns a rollback took out: a result of theirs that
	// comes later (a task a restarted kin followed) stays out too.
	rolled map[string]bool
	// started are the turns of a rollback's first record whose outcome has
	// not come (nil: none), startNote what the model was told meanwhile.
	started   []string
	startNote string
	// unrolled are the turns of every rollback's first record whose
	// outcome never came (kin stopped in it), until an undo of the turn
	// finishes: their checkpoints may say undone with files not put back,
	// and undoing them again puts back the rest.
	unrolled map[string]bool
	// undoing are the turns whose latest undo record is a first one
	// (started) without its outcome; undoingNote what the model was told of
	// the latest such record.
	undoing     map[string]bool
	undoingNote string
	// skillLoads are the use_skill calls that loaded a skill, oldest first
	// (a rollback takes its turns' out).
	skillLoads []skillLoad
	// ended are the turns with an end record.
	ended map[string]bool
	// plans follows the plan in force (a rollback takes its turns' plans
	// out), as a view of the log does after a restart.
	plans session.Plans
}

type convItem struct {
	kind   model.ItemKind
	role   string
	turn   string
	text   string   // a message's text, or a call's arguments
	pieces []string // an answer's later pieces
	callID string
	name   string
	// For an answer: whether it is the model's refusal, and its phase.
	refusal bool
	phase   string
	// same marks a call of the same answer as the call before it.
	same bool
	// For questions with parts: the parts when kept in memory (n == 0),
	// and their size.
	parts     []session.Part
	partBytes int
	// For reasoning: the item, and the model that made it.
	reasoning *model.Reasoning
	model     string
	// For outputs: the framed output's length; for outputs and questions
	// with parts, where the record is (n == 0: kept here, not read back).
	// late marks an output recorded after its turn had ended (an MCP task
	// a restarted kin followed): see carriedOver.
	late   bool
	outLen int
	off    int64
	n      int
}

func newConvo() *convo { return &convo{answered: map[string]bool{}, tasks: map[string]string{}} }

// add takes a record as it is in the log (off, n locate it; n == 0 when it
// could not be written and is kept whole).
func (c *convo) add(r session.Record, off int64, n int) {
	c.plans.Add(r)
	before := len(c.items)
	var piece int
	defer func() {
		if r.Type == session.TypeCompaction {
			c.textBytes, c.outBytes = 0, 0
			before = 0
		}
		for _, it := range c.items[before:] {
			t, o := itemSize(it)
			c.textBytes += t
			c.outBytes += o
		}
		c.textBytes += piece
	}()
	switch r.Type {
	case session.TypeUser:
		it := convItem{kind: model.Message, role: "user", turn: r.TurnID, text: r.Text}
		if len(r.Parts) > 0 {
			it.partBytes = partsSize(r.Parts)
			it.off, it.n = off, n
			if n == 0 {
				it.parts = r.Parts
			}
		}
		c.items = append(c.items, it)
		c.asked, c.answered1 = true, false
		c.turnSeen(r.TurnID)
	case session.TypeSteer:
		c.items = append(c.items, steerItem(r, off, n))
	case session.TypeFork:
		c.forked(r.Fork)
	case session.TypeRollback:
		c.rollback(r.Rollback, r.Status == session.RollbackStarted)
		before = len(c.items) // sizes are counted again by rollback
	case session.TypeAssist:
		c.answered1 = true
		if last := len(c.items) - 1; r.Cont && last >= 0 && c.items[last].kind == model.Message && c.items[last].role == "assistant" &&
			c.items[last].refusal == r.Refusal {
			it := &c.items[last]
			if r.Text != "" {
				it.pieces = append(it.pieces, r.Text)
			}
			if r.Phase != "" {
				it.phase = r.Phase
			}
			piece = len(r.Text)
			return
		}
		c.items = append(c.items, convItem{kind: model.Message, role: "assistant", turn: r.TurnID, text: r.Text, refusal: r.Refusal, phase: r.Phase})
	case session.TypeReasoning:
		rs := model.Reasoning{ID: r.ItemID, Summary: r.Summary, Encrypted: r.Encrypted, Text: r.Text, Field: r.Field}
		if !rs.CarriesOver() {
			return // nothing the model could go on from
		}
		c.items = append(c.items, convItem{kind: model.ReasoningItem, turn: r.TurnID, model: r.Model, reasoning: &rs})
	case session.TypeCall:
		c.answered1 = true
		c.items = append(c.items, convItem{kind: model.FunctionCall, turn: r.TurnID, callID: r.CallID, name: r.Name, text: r.Arguments, same: r.Cont})
	case session.TypeResult:
		c.answered[r.CallID] = true
		call := c.callIndex(r.CallID)
		if call < 0 {
			// Its call left the conversation before the result came (a task
			// a restarted kin followed ended after its turn was rolled back
			// or summarised), or was never recorded: an output without its
			// call is refused by the services, in every request from then
			// on, so it is never sent as one.
			if !c.rolled[r.TurnID] {
				c.items = append(c.items, convItem{kind: model.Message, role: "user", text: lateResultNote(r)})
			}
			if r.Status == string(tool.StatusUnknown) {
				c.unknown = append(c.unknown, session.Unknown{CallID: r.CallID, Name: r.Name, TurnID: r.TurnID, Output: tail(r.Output, unknownOutputKeep)})
			}
			break
		}
		c.noteSkillLoad(call, r)
		it := convItem{kind: model.FunctionOutput, turn: r.TurnID, callID: r.CallID, off: off, n: n, late: r.TurnID != "" && c.ended[r.TurnID]}
		prefix := outputPrefix(r.Status)
		it.outLen = len(prefix) + len(r.Output)
		if n == 0 {
			it.text = prefix + r.Output
		}
		if at := c.outputAt(call); at < len(c.items) {
			c.items = slices.Insert(c.items, at, it)
			before = len(c.items) // counted here, not at the end
			_, o := itemSize(it)
			c.outBytes += o
		} else {
			c.items = append(c.items, it)
		}
		if r.Status == string(tool.StatusUnknown) {
			c.unknown = append(c.unknown, session.Unknown{CallID: r.CallID, Name: r.Name, TurnID: r.TurnID,
				Arguments: c.arguments(r.CallID), Output: tail(r.Output, unknownOutputKeep)})
		}
	case session.TypeTask:
		c.tasks[r.CallID] = fmt.Sprintf("task %s on MCP server %s", r.TaskID, r.Server)
	case session.TypeAck:
		c.unknown = nil
	case session.TypeInstructions:
		c.instr = r.Files
		if len(r.Changed) > 0 {
			c.items = append(c.items, convItem{kind: model.Message, role: "developer", turn: r.TurnID, text: instructionsNote(r.Changed)})
		}
	case session.TypeCompaction:
		keep := len(c.items)
		if r.FromTurn != "" {
			for i, it := range c.items {
				if it.turn == r.FromTurn {
					keep = i
					break
				}
			}
		}
		summary := convItem{kind: model.Message, role: "developer", text: summaryNote(r.Text)}
		c.items = append(append([]convItem{summary}, carriedOver(c.items, keep)...), c.items[keep:]...)
		c.ctxTokens, c.ctxBytes = 0, 0
		c.keptTurns()
	case session.TypeUndo:
		before = c.undo(r.Undo, r.Status == session.UndoStarted) // it counts what it takes out
	case session.TypeTurn:
		// A question left without any answer (the turn failed, was
		// cancelled, or kin stopped) would reach the model as two questions
		// in a row; say what happened instead.
		if c.asked && !c.answered1 && r.Status != TurnCompleted {
			note := "[no answer: this turn ended " + r.Status
			if r.Error != "" {
				note += ": " + r.Error
			}
			c.items = append(c.items, convItem{kind: model.Message, role: "assistant", turn: r.TurnID, text: note + "]"})
		}
		c.asked, c.answered1 = false, false
		if c.ended == nil {
			c.ended = map[string]bool{}
		}
		c.ended[r.TurnID] = true
		if r.Usage != nil && r.Usage.ContextTokens > 0 {
			c.observe(r.Usage.ContextTokens, outputBudget(r.Usage.ContextWindow))
		}
	}
}

// carriedOver are the calls, with their outputs, that a compaction keeps
// after its summary although they come before the items it keeps: those
// whose output came late (an MCP task a restarted kin followed ended after
// its turn). Such an output can land while the model writes the summary,
// after the transcript it summarises was taken: dropped with the items
// before keep, the model would never learn what the task gave. Which late
// outputs the transcript had is not on record, so every late one is
// carried over once (an output the summary covers is then sent twice, the
// price of never losing one); carried, it is of no turn and not late, so
// the next compaction summarises it as any other.
func carriedOver(items []convItem, keep int) []convItem {
	var out []convItem
	for i := range keep {
		it := items[i]
		if it.kind != model.FunctionOutput || !it.late {
			continue
		}
		for j := i - 1; j >= 0; j-- {
			if c := items[j]; c.kind == model.FunctionCall && c.callID == it.callID {
				c.turn, c.same = "", false
				it.turn, it.late = "", false
				out = append(out, c, it)
				break
			}
		}
	}
	return out
}

// callIndex is where the latest call with id is in the items (-1: none).
func (c *convo) callIndex(id string) int {
	for i := len(c.items) - 1; i >= 0; i-- {
		if c.items[i].kind == model.FunctionCall && c.items[i].callID == id {
			return i
		}
	}
	return -1
}

// lateResultNote tells the model that a call it no longer sees whole (a
// summary covers it) has ended. Only kin's words: the output is a tool's,
// which a note in the person's voice must not carry.
func lateResultNote(r session.Record) string {
	return fmt.Sprintf("[kin: the call %s (id %s), which the conversation above no longer shows whole, has ended %s. Its output is in the session for the person, not here; call the tool again if you need what it gave.]",
		visible.Clip(r.Name, 200), visible.Clip(r.CallID, 200), visible.Clip(r.Status, 40))
}

// outputAt is where the output of the call at items[i] goes: at the end,
// as outputs come, unless a question came after the run of calls and
// outputs the call is in (a task a restarted kin followed ended later):
// then at the end of that run, so the output stays next to its call.
func (c *convo) outputAt(i int) int {
	j := i + 1
	for j < len(c.items) && (c.items[j].kind == model.FunctionCall || c.items[j].kind == model.FunctionOutput) {
		j++
	}
	return j
}

// instructionsNote tells the model that the instructions in force changed
// (what changed: a path added or edited, "-path" no longer in force).
func instructionsNote(changed []string) string {
	var now, gone []string
	for _, p := range changed {
		if g, ok := strings.CutPrefix(p, "-"); ok {
			gone = append(gone, g)
		} else {
			now = append(now, p)
		}
	}
	var b strings.Builder
	b.WriteString("[kin: the project's instructions changed since you last saw them")
	if len(now) > 0 {
		b.WriteString("; new or edited: " + strings.Join(notePaths(now), ", "))
	}
	if len(gone) > 0 {
		b.WriteString("; no longer in force: " + strings.Join(notePaths(gone), ", "))
	}
	b.WriteString(". What is in force now is in your instructions; follow it from here on.]")
	return b.String()
}

// summaryNote is how a compaction's summary reaches the model.
func summaryNote(summary string) string {
	return "[kin: the conversation before this point was summarised to fit your context window. The summary, written by you, follows; the person can still see the whole conversation.]\n\n" + summary
}

func partsSize(ps []session.Part) int {
	n := 0
	for _, p := range ps {
		if p.Type == "image" {
			n += imageBytes
		} else {
			n += len(p.Text) + len(p.Path) + len(p.URI) + 64
			for _, d := range p.Items {
				n += len(d.Message) + len(d.Source) + 24
			}
		}
	}
	return n
}

// size estimates how many bytes of the conversation a request sends (tool
// outputs up to budget).
func (c *convo) size(budget int) int { return c.textBytes + min(c.outBytes, budget) }

// itemSize is an item's bytes in a request: text (images at what they
// cost, reasoning by its summary: its encrypted content the service counts
// in tokens), or tool output.
func itemSize(it convItem) (text, out int) {
	switch it.kind {
	case model.FunctionOutput:
		return 0, it.outLen
	case model.ReasoningItem:
		for _, s := range it.reasoning.Summary {
			text += len(s)
		}
		return text + len(it.reasoning.Text), 0
	}
	text = len(it.text) + it.partBytes + len(it.name)
	for _, p := range it.pieces {
		text += len(p)
	}
	return text, 0
}

// itemsSize is size for a run of items.
func itemsSize(items []convItem, budget int) int {
	text, out := 0, 0
	for _, it := range items {
		t, o := itemSize(it)
		text, out = text+t, out+o
	}
	return text + min(out, budget)
}

// observe notes how many tokens the model said the context holds now.
func (c *convo) observe(tokens int64, budget int) {
	c.ctxTokens, c.ctxBytes = tokens, c.size(budget)
}

// estimate is how many tokens the next request would take, extra bytes
// (the instructions) included: the model's last count plus what was added
// since, or, not knowing it, about four bytes a token.
// question is the first words of the question that started turn, or ""
// when the conversation no longer holds it (summarised away).
func (c *convo) question(turn string) string {
	for _, it := range c.items {
		if it.kind == model.Message && it.role == "user" && it.turn == turn {
			return titleFrom(it.text)
		}
	}
	return ""
}

func (c *convo) estimate(extra, budget int) int64 {
	b := c.size(budget)
	if c.ctxTokens > 0 && b >= c.ctxBytes {
		return c.ctxTokens + int64(b-c.ctxBytes)/4
	}
	return int64(b+extra) / 4
}

// unknownOutputKeep is how much of an unknown call's output its
// acknowledgement shows (the end, where kin says what it knows).
const unknownOutputKeep = 1000

// arguments are a call's arguments as the conversation recorded them.
func (c *convo) arguments(callID string) string {
	for i := len(c.items) - 1; i >= 0; i-- {
		if it := c.items[i]; it.kind == model.FunctionCall && it.callID == callID {
			return it.text
		}
	}
	return ""
}

// tail is the end of s, at most n bytes, cut at a line or rune boundary.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
		return "…" + s[i:]
	}
	return "…" + strings.ToValidUTF8(s, "")
}

// outputPrefix tells the model how a call ended, before what it produced
// (tool.OutputPrefix, shared with what the model saw).
func outputPrefix(status string) string { return tool.OutputPrefix(status) }

// view says how to build a request's input.
type view struct {
	model     string // reasoning items made by this model are sent back
	reasoning bool   // the service takes reasoning items
	budget    int    // of tool output
}

// model builds the request input. read fetches a record back from the log.
func (c *convo) model(read func(off int64, n int) (session.Record, error), v view) []model.Item {
	// Outputs within the budget, newest first.
	keep := make(map[int]bool)
	used := 0
	for i := len(c.items) - 1; i >= 0; i-- {
		if it := c.items[i]; it.kind == model.FunctionOutput {
			if used+it.outLen <= v.budget {
				keep[i] = true
			}
			used += it.outLen
		}
	}
	out := make([]model.Item, 0, len(c.items))
	// calls is where the next call of the same answer goes: after the
	// answer's calls so far, before their outputs (the model asked for them
	// together, and Chat Completions takes them as one message); -1 when
	// no answer's calls came last.
	calls := -1
	for i, it := range c.items {
		if it.kind != model.FunctionCall && it.kind != model.FunctionOutput {
			calls = -1
		}
		switch it.kind {
		case model.Message:
			text := it.text
			if len(it.pieces) > 0 {
				text += strings.Join(it.pieces, "")
			}
			m := model.Item{Kind: model.Message, Role: it.role, Text: text, Refusal: it.refusal, Phase: it.phase}
			if it.partBytes > 0 {
				m.Content = partsOf(it, read)
			}
			out = append(out, m)
		case model.ReasoningItem:
			// Only the model that made an item can go on from it, and only
			// when what it led to follows.
			if !v.reasoning || it.model != v.model || i+1 >= len(c.items) {
				continue
			}
			if next := c.items[i+1]; next.kind != model.FunctionCall && !(next.kind == model.Message && next.role == "assistant") {
				continue
			}
			out = append(out, model.Item{Kind: model.ReasoningItem, Reasoning: it.reasoning})
		case model.FunctionCall:
			call := model.Item{Kind: model.FunctionCall, CallID: it.callID, Name: it.name, Arguments: it.text}
			if it.same && calls >= 0 {
				out = slices.Insert(out, calls, call)
				calls++
			} else {
				out = append(out, call)
				calls = len(out)
			}
			if !c.answered[it.callID] {
				o := "[unknown] no result was recorded for this call; it may or may not have run"
				if task, ok := c.tasks[it.callID]; ok {
					o = "[working] this call runs as " + task + ", which kin follows; its result is not in yet and will be added here when the task ends"
				}
				out = append(out, model.Item{Kind: model.FunctionOutput, CallID: it.callID, Output: o})
			}
		case model.FunctionOutput:
			o := model.Item{Kind: model.FunctionOutput, CallID: it.callID}
			switch {
			case !keep[i]:
				o.Output = fmt.Sprintf("[output of %d bytes left out to fit the context budget; call the tool again if it is still needed]", it.outLen)
			case it.n == 0:
				o.Output = it.text
			default:
				if r, err := read(it.off, it.n); err != nil {
					o.Output = "[kin could not read this output back from the session log: " + err.Error() + "]"
				} else {
					o.Output = outputPrefix(r.Status) + r.Output
				}
			}
			out = append(out, o)
		}
	}
	inCallOrder(out)
	return out
}

// inCallOrder puts each run of outputs in the order of their calls: calls
// that ran side by side (an answer's delegate calls) record their outputs
// as they end, and a chat template that pairs outputs with calls by
// position must not get them crossed.
func inCallOrder(items []model.Item) {
	var at map[string]int // where each call is; made at the first run of outputs
	for i := 0; i < len(items); {
		j := i
		for j < len(items) && items[j].Kind == model.FunctionOutput {
			j++
		}
		if j-i > 1 {
			if at == nil {
				at = map[string]int{}
				for k, it := range items {
					if it.Kind == model.FunctionCall {
						at[it.CallID] = k
					}
				}
			}
			slices.SortStableFunc(items[i:j], func(a, b model.Item) int { return at[a.CallID] - at[b.CallID] })
		}
		i = max(j, i+1)
	}
}

// partsOf is a question's parts as the model reads them, read back from the
// log when they are not kept in memory.
func partsOf(it convItem, read func(off int64, n int) (session.Record, error)) []model.Content {
	parts := it.parts
	if it.n > 0 {
		r, err := read(it.off, it.n)
		if err != nil {
			return []model.Content{{Text: it.text + "\n[kin could not read what this question attached back from the session log: " + err.Error() + "]"}}
		}
		parts = r.Parts
	}
	out := make([]model.Content, 0, len(parts))
	for _, p := range parts {
		if p.Type == "text" && p.Text == "" {
			continue
		}
		out = append(out, framed(p))
	}
	return out
}
