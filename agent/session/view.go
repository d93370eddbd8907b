package session

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/kin-dev/kin/agent/tool"
)

// Query picks a page of history: the newest Limit items that start before
// the Before cursor (all of them when Before is empty).
type Query struct {
	Limit  int
	Before string
}

// ErrBadCursor is returned for a Before that no page handed out.
var ErrBadCursor = errors.New("invalid params: before is not a cursor session/resume returned")

// Page is a slice of a session's history, oldest first.
type Page struct {
	Items []HistoryItem
	// Cursor, when set, is the Before of the page just older than this
	// one; empty when this page starts at the session's beginning.
	Cursor string
}

// View is what one pass over a session's log found: its summary, what a
// stopped kin left open, and one page of its history. The pass decodes each
// record once and keeps only the page, so reading a long session costs
// about as much as decoding its file, and memory stays near the page's size.
type View struct {
	Info    Info
	Records int // records read
	Skipped int // lines that were not records

	page pager

	// What is open at the end of the log.
	calls    map[string]openCall // calls without a result
	callSeq  []string            // their ids, in order
	lastTurn string              // the turn of the latest turn-bound record
	ended    bool                // whether lastTurn has its end record
	// endedTurns are the turns with an end record: a result recorded
	// after a later turn (a task a restarted kin followed) is not a turn
	// left open.
	endedTurns map[string]bool
	unknown    []Unknown

	// The latest configure and instructions records' content.
	model, effort string
	instructions  []InstructionFile
	plans         Plans     // the plan in force
	findings      []Finding // review findings, the latest MaxFindings
	parent        *Lineage  // a subagent's session's, from its first record
}

type openCall struct {
	turnID, name string
	allowed      bool
	// server, launch and task: the MCP task the call runs as (a task
	// record).
	server, launch, task string
}

// View reads a session's log, opening it read-only.
func (s *Store) View(id string, q Query) (*View, error) {
	p, err := s.path(id)
	if err != nil {
		return nil, err
	}
	before := int64(-1)
	if q.Before != "" {
		if before, err = strconv.ParseInt(strings.TrimPrefix(q.Before, "h"), 36, 64); err != nil || before < 0 || !strings.HasPrefix(q.Before, "h") {
			return nil, ErrBadCursor
		}
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v := &View{Info: Info{SessionID: id}, calls: map[string]openCall{}}
	v.page = pager{limit: q.Limit, before: before, calls: map[string]int{}, assist: -1}
	var r Record
	bad := 0
	skipped, err := eachLine(f, 0, func(off int64, line []byte) {
		if !parse(line, &r) {
			bad++
			return
		}
		v.Add(r, off)
	})
	v.Skipped = skipped + bad
	if err != nil {
		return nil, err
	}
	if v.Records == 0 {
		return nil, fmt.Errorf("%w: %s (its log holds no records)", ErrNotFound, id)
	}
	return v, nil
}

// Add takes one more record, at offset off of the log: the pass feeds every
// record through it, and an owner feeds the records it appends afterwards
// (the repairs) so the page shows them.
func (v *View) Add(r Record, off int64) {
	v.Records++
	v.Info.add(r)
	v.plans.Add(r)
	switch {
	case r.Type == TypeSession && r.Parent != nil:
		p := *r.Parent
		v.parent = &p
	case r.Type == TypeCall:
		v.calls[r.CallID] = openCall{turnID: r.TurnID, name: r.Name}
		v.callSeq = append(v.callSeq, r.CallID)
	case r.Type == TypeResult:
		delete(v.calls, r.CallID)
		if r.Status == string(tool.StatusUnknown) {
			v.unknown = append(v.unknown, Unknown{CallID: r.CallID, Name: r.Name, TurnID: r.TurnID})
		}
	case r.Type == TypeDecision && r.CallID != "" && (r.Decision == "allow_once" || r.Decision == "allow_always"):
		if c, ok := v.calls[r.CallID]; ok {
			c.allowed = true
			v.calls[r.CallID] = c
		}
	case r.Type == TypeTask && r.CallID != "" && r.TaskID != "":
		if c, ok := v.calls[r.CallID]; ok {
			c.server, c.launch, c.task = r.Server, r.Launch, r.TaskID
			v.calls[r.CallID] = c
		}
	case r.Type == TypeAck:
		v.unknown = nil
	case r.Type == TypeConfigure:
		v.model, v.effort = r.Model, r.Effort
	case r.Type == TypeInstructions:
		v.instructions = r.Files
	case r.Type == TypeFinding && r.Finding != nil:
		if len(v.findings) == MaxFindings {
			v.findings = v.findings[1:]
		}
		f := *r.Finding
		f.TurnID = r.TurnID
		v.findings = append(v.findings, f)
	}
	if r.TurnID != "" {
		if r.Type == TypeTurn {
			if r.TurnID == v.lastTurn {
				v.ended = true
			}
			if v.endedTurns == nil {
				v.endedTurns = map[string]bool{}
			}
			v.endedTurns[r.TurnID] = true
		} else if r.TurnID != v.lastTurn && !v.endedTurns[r.TurnID] {
			v.lastTurn, v.ended = r.TurnID, false
		}
	}
	v.page.add(r, off)
}

// Roots are the session's workspace folders as recorded when it was made
// (nil for a session recorded before sessions kept them).
func (v *View) Roots() []string { return v.Info.roots() }

// Model and Effort are what the session's latest configure record set (""
// for a session recorded before sessions kept them).
func (v *View) Model() string  { return v.model }
func (v *View) Effort() string { return v.effort }

// Instructions are the project instructions files in force at the latest
// instructions record.
func (v *View) Instructions() []InstructionFile { return v.instructions }

// Parent is where a subagent's session comes from (nil for a person's
// session).
func (v *View) Parent() *Lineage { return v.parent }

// Plan is the plan in force: the last the model recorded in a turn not
// rolled back (nil when there is none).
func (v *View) Plan() []PlanEntry { return v.plans.Current() }

// MaxFindings is how many review findings a view keeps (the latest).
const MaxFindings = 500

// Findings are the session's review findings, oldest first, each with the
// turn that reported it (the latest MaxFindings).
func (v *View) Findings() []Finding { return v.findings }

// Unknown lists calls that ended unknown since the last acknowledgement.
func (v *View) Unknown() []Unknown { return v.unknown }

// OpenTurn is the turn the log ends in when that turn has no end record:
// one running in the kin that owns the session, or one a stopped kin left.
func (v *View) OpenTurn() string {
	if v.ended {
		return ""
	}
	return v.lastTurn
}

// Repairs are the records that close what a stopped kin left open, for the
// session's owner to append: a call without a result gets one (unknown if
// the person had allowed it, since it may have run; failed if it was never
// allowed), and a turn without an end ends failed. Text that had streamed
// is already in the log and stays.
func (v *View) Repairs() []Record {
	out, _ := v.repairs(false)
	return out
}

// OpenTask is an allowed call a stopped kin left running as an MCP task:
// its result is still to come from the server.
type OpenTask struct {
	TurnID, CallID, Name string
	Server, TaskID       string
	Launch               string // the launch the call ran on (Record.Launch)
}

// RepairsFollowing is Repairs for an owner that goes on polling the tasks
// a stopped kin left: an allowed call with a task record is left open
// (returned in tasks, to be followed and closed by its result) instead of
// ending unknown.
func (v *View) RepairsFollowing() (repairs []Record, tasks []OpenTask) {
	return v.repairs(true)
}

func (v *View) repairs(follow bool) ([]Record, []OpenTask) {
	var out []Record
	var tasks []OpenTask
	seen := map[string]bool{}
	for _, id := range v.callSeq {
		c, open := v.calls[id]
		if !open || seen[id] {
			continue // a call id a model used again in a later turn is one open call
		}
		seen[id] = true
		if c.allowed && c.task != "" && follow {
			tasks = append(tasks, OpenTask{TurnID: c.turnID, CallID: id, Name: c.name, Server: c.server, TaskID: c.task, Launch: c.launch})
			continue
		}
		res := Record{Type: TypeResult, TurnID: c.turnID, CallID: id, Name: c.name,
			Status: string(tool.StatusFailed), Output: "not run: kin stopped before this call was decided"}
		if c.allowed {
			res.Status, res.Output = string(tool.StatusUnknown), "kin stopped while this call ran: it may have happened"
			if c.task != "" {
				res.Output = fmt.Sprintf("kin stopped while this call ran as task %s on MCP server %s, and nothing follows the task now: it may have happened", c.task, c.server)
			}
		}
		out = append(out, res)
	}
	if t := v.OpenTurn(); t != "" {
		out = append(out, Record{Type: TypeTurn, TurnID: t, Status: "failed", Error: StoppedDuringTurn})
	}
	return out, tasks
}

// Waiting shows call callID, still open, as "working" with its subagent:
// a delegate call a stopped kin left, whose subagent's tasks its owner
// follows (the call's result comes when they end).
func (v *View) Waiting(callID string, sub *SubagentRef) {
	if it := v.page.slot(v.page.callItem(callID)); it != nil && it.item.Status == "pending" {
		it.item.Status = "working"
		if sub != nil {
			it.item.Subagent = sub
		}
	}
}

// StoppedDuringTurn is how a turn that a stopped kin left open ends.
const StoppedDuringTurn = "kin stopped during this turn"

// Page returns the page the query asked for.
func (v *View) Page() Page { return v.page.result() }

// pager keeps the newest limit history items seen so far, in a ring, so a
// pass over a long log never holds more than one page.
type pager struct {
	limit  int
	before int64 // items must start before this offset; <0: no bound
	ring   []pageItem
	n      int            // items taken so far
	calls  map[string]int // call id -> item number, while in the ring
	assist int            // item number of the latest assistant item, -1 none
	// rolling and undoing are a rollback's and an undo's first record
	// whose outcome has not come yet.
	rolling, undoing firstRecord
}

// firstRecord is the first of a record written in two steps (a rollback's
// or an undo's "started"), while its outcome has not come: key names what
// it is of (the turns, the turn), item is its history item's number (-1:
// none on the page).
type firstRecord struct {
	key  string
	open bool
	item int
}

// outcome takes a two-step record to history: a first record (started)
// opens f, and the outcome of the same key then changes the first one's
// item (set) instead of making its own; it reports whether r was such an
// outcome. Like a result, the outcome changes an item before it, wherever
// the page's cursor is. An outcome with no first record (a log from before
// first records) is its own item.
func (p *pager) outcome(f *firstRecord, started bool, key string, set func(*HistoryItem)) bool {
	if started {
		*f = firstRecord{key: key, open: true, item: -1} // the item, if any, is taken
		return false
	}
	if !f.open || f.key != key {
		return false
	}
	f.open = false
	if it := p.slot(f.item); it != nil {
		set(&it.item)
	}
	return true
}

type pageItem struct {
	off   int64
	item  HistoryItem
	parts []string // an answer's pieces, joined at the end
}

func (p *pager) slot(k int) *pageItem {
	if p.limit <= 0 || k < 0 || k < p.n-p.limit || k >= p.n {
		return nil
	}
	return &p.ring[k%p.limit]
}

func (p *pager) add(r Record, off int64) {
	if p.limit <= 0 {
		return
	}
	switch r.Type {
	case TypeResult:
		if it := p.slot(p.callItem(r.CallID)); it != nil {
			it.item.Status, it.item.Output, it.item.Content = r.Status, r.Output, r.Content
			it.item.Saw, it.item.Links = modelSaw(r), r.Links
			if r.Subagent != nil {
				it.item.Subagent = r.Subagent
			}
			if r.Title != "" {
				it.item.Title = r.Title
			}
		}
		return
	case TypeTask:
		// The call runs as an MCP task: "working" until its result (a kin
		// that restarted follows it, see agent's taskresume.go).
		if it := p.slot(p.callItem(r.CallID)); it != nil && it.item.Status == "pending" {
			it.item.Status = "working"
		}
		return
	case TypeAssist:
		if r.Cont {
			if it := p.slot(p.assist); it != nil && it.item.TurnID == r.TurnID {
				it.parts = append(it.parts, r.Text)
			}
			return
		}
	case TypeRollback:
		// Like a result, it changes items before it: an older page (its
		// record after the cursor) marks its turns' items all the same.
		if p.rollback(r) {
			return
		}
	case TypeUndo:
		if p.undo(r) {
			return
		}
	}
	if p.before >= 0 && off >= p.before {
		if r.Type == TypeAssist {
			p.assist = -1 // its pieces belong to an item after the cursor
		}
		return
	}
	var it HistoryItem
	switch r.Type {
	case TypeUser:
		it = HistoryItem{Type: r.Type, TurnID: r.TurnID, Text: r.Text, Parts: AttachedParts(r.Parts)}
	case TypeAssist:
		it = HistoryItem{Type: r.Type, TurnID: r.TurnID, Text: r.Text, Refusal: r.Refusal}
	case TypeReasoning:
		text := strings.Join(r.Summary, "\n\n")
		if text == "" {
			text = r.Text
		}
		if text == "" {
			return // nothing a person could read
		}
		it = HistoryItem{Type: r.Type, TurnID: r.TurnID, Text: text}
	case TypeCompaction:
		it = HistoryItem{Type: r.Type, TurnID: r.TurnID, Text: r.Text, Reason: r.Reason}
	case TypeInstructions:
		if len(r.Changed) == 0 {
			return // the files a session started with: session/new said them
		}
		it = HistoryItem{Type: r.Type, TurnID: r.TurnID, Files: r.Files, Changed: r.Changed}
	case TypeConfigure:
		if r.Reason == ConfigureNew {
			return // the session's first choice: session/new said it
		}
		it = HistoryItem{Type: r.Type, TurnID: r.TurnID, Model: r.Model, Effort: r.Effort}
	case TypeCall:
		it = HistoryItem{Type: "toolCall", TurnID: r.TurnID, CallID: r.CallID, Name: r.Name,
			Kind: r.Kind, Title: r.Title, Arguments: r.Arguments, Status: "pending"}
	case TypeDecision:
		it = HistoryItem{Type: "decision", TurnID: r.TurnID, CallID: r.CallID, RequestID: r.RequestID,
			ApprovalKind: r.ApprovalKind, Decision: r.Decision, Reason: r.Reason, Title: r.Title, Approved: r.Approved}
	case TypeTurn:
		it = HistoryItem{Type: "turn", TurnID: r.TurnID, Status: r.Status, Error: r.Error, Usage: r.Usage}
	case TypeElicit:
		it = HistoryItem{Type: "elicitation", TurnID: r.TurnID, CallID: r.CallID, RequestID: r.RequestID,
			Server: r.Server, Mode: r.Mode, Source: r.Source, Title: r.Title, Decision: r.Decision, Reason: r.Reason}
	case TypeMode:
		it = HistoryItem{Type: "mode", Mode: r.Mode}
	case TypePlan:
		it = HistoryItem{Type: "plan", TurnID: r.TurnID, CallID: r.CallID, Entries: r.Entries}
	case TypeUndo:
		it = p.undoItem(r, p.n)
	case TypeSteer:
		it = HistoryItem{Type: TypeSteer, TurnID: r.TurnID, Text: r.Text, Parts: AttachedParts(r.Parts)}
	case TypeRollback:
		it = p.rollbackItem(r, p.n)
	case TypeFork:
		it = HistoryItem{Type: TypeFork, Fork: r.Fork}
	default:
		return
	}
	if p.ring == nil {
		p.ring = make([]pageItem, 0, min(p.limit, 256))
	}
	k := p.n
	if len(p.ring) < p.limit {
		p.ring = append(p.ring, pageItem{})
	} else if old := &p.ring[k%p.limit]; old.item.Type == "toolCall" {
		delete(p.calls, old.item.CallID)
	}
	p.ring[k%p.limit] = pageItem{off: off, item: it}
	p.n++
	switch r.Type {
	case TypeCall:
		p.calls[r.CallID] = k
	case TypeAssist:
		p.assist = k
	}
}

func (p *pager) callItem(id string) int {
	if k, ok := p.calls[id]; ok {
		return k
	}
	return -1
}

func (p *pager) result() Page {
	if p.limit <= 0 || p.n == 0 {
		return Page{Items: []HistoryItem{}}
	}
	first := max(0, p.n-p.limit)
	out := Page{Items: make([]HistoryItem, 0, p.n-first)}
	for k := first; k < p.n; k++ {
		it := p.ring[k%p.limit]
		if len(it.parts) > 0 {
			var b strings.Builder
			b.Grow(len(it.item.Text) + partsLen(it.parts))
			b.WriteString(it.item.Text)
			for _, s := range it.parts {
				b.WriteString(s)
			}
			it.item.Text = b.String()
		}
		out.Items = append(out.Items, it.item)
	}
	if first > 0 {
		out.Cursor = "h" + strconv.FormatInt(p.ring[first%p.limit].off, 36)
	}
	return out
}

// ConfigureNew is the Reason of the configure record a new session starts
// with.
const ConfigureNew = "new"

// AttachedParts is what history shows of a question's parts: every part but
// the text ones (their text is the item's), without file, selection,
// resource and image contents (Bytes says how long they were).
func AttachedParts(ps []Part) []Part {
	var out []Part
	for _, p := range ps {
		if p.Type == "text" {
			continue
		}
		p.Bytes = len(p.Text) + len(p.Data)*3/4
		p.Text, p.Data = "", ""
		out = append(out, p)
	}
	return out
}

func partsLen(ps []string) int {
	n := 0
	for _, s := range ps {
		n += len(s)
	}
	return n
}

// modelSaw is what the model saw of a result record: what the tool said
// of it, with the exact text the model got.
func modelSaw(r Record) *tool.Saw {
	saw := tool.Saw{}
	if r.Saw != nil {
		saw = *r.Saw
	}
	saw.Text = tool.ModelText(r.Status, r.Output)
	return &saw
}
