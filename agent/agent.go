// Package agent runs chat turns: it keeps sessions, sends the conversation
// to the model, runs the calls the model asks for through the permission
// gate, and reports progress through Events.
//
// It knows nothing of JSON-RPC or editors (package rpc translates), and it
// never lets a call run that the gate did not allow, nor one whose record is
// not yet durable, nor lets a repository's hook run or its skills and
// instruction files reach the model before the person trusted them (the
// ledger, trusted.go). A subagent (the delegate tool's child session) never
// gets more than its parent session has: its folders, a mode no wider, the
// same gate and the same person.
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/checkpoint"
	"github.com/kin-dev/kin/agent/files"
	"github.com/kin-dev/kin/agent/instructions"
	"github.com/kin-dev/kin/agent/ledger"
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/settings"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/agent/toolsearch"
)

// MaxCallsPerTurn is how many tool calls a turn makes before kin asks the
// person whether to go on (the setting maxToolCallsPerTurn changes it).
const MaxCallsPerTurn = 16

// DefaultHistoryPage is how many history items a resume returns when the
// editor names no limit.
const DefaultHistoryPage = 200

// Errors the front end maps to protocol codes.
var (
	ErrSessionNotFound = session.ErrNotFound
	ErrTurnRunning     = errors.New("a turn is already running on this session; cancel it or wait for turn/completed")
	ErrNotConfigured   = errors.New("kin: no model service is configured")
	// ErrSessionOwned: another kin has the session open; here it is read-only.
	ErrSessionOwned = session.ErrOwned
	// ErrSessionReadOnly: the session's log cannot be written (a read-only
	// KIN_HOME); its history can still be read.
	ErrSessionReadOnly = session.ErrReadOnly
	// ErrBadCursor: a resume's before is not a cursor kin handed out.
	ErrBadCursor = session.ErrBadCursor
	// ErrBadParams wraps what is wrong with a request's values (an
	// unknown mode, an unknown command, a model kin does not have, an
	// effort the model does not take); the front end maps it to invalid
	// params.
	ErrBadParams = errors.New("invalid params")
	// ErrBadChoice is ErrBadParams for a model or an effort.
	ErrBadChoice = ErrBadParams
)

// Options configure a Service.
type Options struct {
	Home string // KIN_HOME: sessions live in Home/sessions
	// Models are the models sessions may use; without any, Model is the
	// one model.
	Models     model.Catalog
	Model      model.Config
	HTTPClient *http.Client // for the model service; nil uses the default
	Tools      tool.Source
	Events     Events
	Gate       *permission.Gate
	Logger     *zap.Logger
	// Instructions replaces kin's own system prompt when set (the
	// project's instructions files are still added).
	Instructions string
	// Asker puts the ask tool's questions to the person; nil declines them
	// as headless.
	Asker Asker
	// Prompts are the MCP prompts offered as commands (nil: none).
	Prompts Prompts
	// SessionPrompts, when set, adds a session's own MCP prompts (the
	// servers an ACP client passed for that session) to Prompts.
	SessionPrompts func(sessionID string) Prompts
	// Resources reads the MCP resource a question attaches by server and
	// URI (input part {"type":"resource","server":S,"uri":U}); nil: such
	// parts are refused.
	Resources ResourceReader
	// Commands are the commands the front end runs itself (/grants, /mcp).
	Commands []FrontCommand
	// MaxCallsPerTurn is how many tool calls a turn makes before kin asks
	// to go on; 0 means the setting maxToolCallsPerTurn, else
	// MaxCallsPerTurn.
	MaxCallsPerTurn int
	// Files is how a session's tools read and write files (the editor's
	// buffers first, where the front end keeps them). Nil means the disk.
	Files func(sessionID string) files.Access
	// BeforeWrite, when set, sees every file write of the built-in tools
	// before it happens, with the content it replaces (c.Old), and stops
	// it by failing: the hook for checkpoints (turn/undo).
	BeforeWrite func(ctx context.Context, c files.Change) error
	// SessionTools, when set, adds a session's own tools to Tools (the MCP
	// servers an ACP client passed for that session): asked before each
	// model request, as Tools is.
	SessionTools func(sessionID string) []tool.Tool
	// UserHome is the person's home folder, whose ~/.agents/skills are
	// theirs ("": os.UserHomeDir).
	UserHome string
	// Sandbox confines hooks as the built-in tools confine commands (nil:
	// sandbox.Default()).
	Sandbox *sandbox.Sandbox
	// MCPSkills are the skills the connected MCP servers serve (the
	// Skills extension; nil: none).
	MCPSkills MCPSkills
	// Tasks goes on polling the MCP tasks a stopped kin left running when
	// their session is resumed (nil: such calls end unknown).
	Tasks TaskFollower
}

// Service owns sessions and runs turns. It keeps no workspace of its own:
// every session carries its roots.
type Service struct {
	opts   Options
	models model.Catalog
	store  *session.Store
	// stopping is set once kin begins to stop (Stopping, Shutdown): what
	// its turns' calls meet from then on is kin's end, not the person's
	// (tool.Stopping).
	stopping atomic.Bool
	// checkpoints keep what kin's tools changed, per turn (turn/undo).
	checkpoints *checkpoint.Store
	loader      *instructions.Loader
	// ledger is the one trust ledger: what the person trusted of what
	// repositories and servers bring (trusted.go).
	ledger *ledger.Ledger
	// home is the person's home folder.
	home string
	log  *zap.Logger
	// maxCalls is a turn's budget of tool calls before it asks to go on.
	maxCalls int
	// toolSearch is the budget past which MCP tools are deferred
	// (settings toolSearchThreshold; agent/toolsearch).
	toolSearch toolsearch.Threshold
	// spend is the person's spend limits and what was used (limits.go).
	spend *spending
	// subagentCfg and slots are the delegate tool's settings and how many
	// subagents may run at once.
	subagentCfg       subagentConfig
	slots             *slots
	subagentModelOnce sync.Once

	// cmu guards clients: one per model, made on first use.
	cmu     sync.Mutex
	clients map[string]*model.Client

	// mu guards sessions.
	mu       sync.Mutex
	sessions map[string]*Session

	// warmed are the sets of roots whose walk ran ahead of their first
	// command (warm.go).
	warmed sync.Map

	turns sync.WaitGroup
	// following holds the MCP tasks this kin follows after a restart
	// (session id + call id, each with the cancel of its following), so a
	// session owned again does not follow one twice, and a deleted one
	// follows none (taskresume.go).
	following sync.Map

	// rollbackRestored, for tests, runs once a rollback has put files
	// back and before it records what it did: where a killed kin leaves
	// a rollback unfinished.
	rollbackRestored func()
	// undoRestored, for tests, runs once an undo has put files back and
	// before it records what it did: where a killed kin leaves an undo
	// unfinished.
	undoRestored func()
}

// New builds a Service.
func New(opts Options) *Service {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Tools == nil {
		opts.Tools = tool.Static(nil)
	}
	// A settings file that cannot be read is reported where the model
	// configuration is read; here it leaves the defaults.
	st, _ := settings.Load(opts.Home)
	maxCalls := opts.MaxCallsPerTurn
	if maxCalls <= 0 {
		maxCalls = MaxCallsPerTurn
		if st.MaxToolCallsPerTurn > 0 {
			maxCalls = st.MaxToolCallsPerTurn
		}
	}
	subCfg, subSlots := newSubagentConfig(st.Subagents)
	models := opts.Models
	if len(models.Models) == 0 {
		models = model.One(opts.Model)
	}
	s := &Service{
		opts:        opts,
		models:      models,
		store:       session.NewStore(filepath.Join(opts.Home, "sessions")),
		checkpoints: checkpoint.New(filepath.Join(opts.Home, "checkpoints")),
		loader:      instructions.NewLoader(),
		ledger:      ledger.Open(opts.Home),
		home:        opts.UserHome,
		log:         opts.Logger,
		maxCalls:    maxCalls,
		toolSearch:  toolsearch.FromSettings(st.ToolSearchThreshold),
		subagentCfg: subCfg,
		slots:       subSlots,
		clients:     map[string]*model.Client{},
		sessions:    map[string]*Session{},
	}
	if s.home == "" {
		s.home, _ = os.UserHomeDir()
	}
	s.spend = newSpending(opts.Home, st.Limits, s.store, s.log)
	// Checkpoints of sessions deleted by another kin, or while none ran.
	s.checkpoints.Prune(s.store.Exists)
	return s
}

// Files is how the tools of a session read and write files: the front
// end's Access (the editor's buffers first), wrapped so that every write
// of a turn keeps its checkpoint first (turn/undo), and BeforeWrite sees
// it. Everything that reads a file for a session (tools,
// a turn's file input) goes through it.
func (s *Service) Files(sessionID string) files.Access {
	return files.WithBeforeWrite(checkpointed{Access: s.frontFiles(sessionID), store: s.checkpoints}, s.opts.BeforeWrite)
}

// tools is what a session's model may call now: the service's tools, then
// the session's own.
func (s *Service) tools(sessionID string) []tool.Tool {
	out := s.opts.Tools.Tools()
	if s.opts.SessionTools != nil {
		out = append(out, s.opts.SessionTools(sessionID)...)
	}
	return out
}

// frontFiles is the front end's access itself (the disk without one).
func (s *Service) frontFiles(sessionID string) files.Access {
	if s.opts.Files != nil {
		if fa := s.opts.Files(sessionID); fa != nil {
			return fa
		}
	}
	return files.Disk{}
}

// Models are the models sessions may use, and the default.
func (s *Service) Models() model.Catalog { return s.models }

// client is the model's client (one per model, so what it learnt of the
// service, such as refused reasoning parameters, holds for every session).
func (s *Service) client(cfg model.Config) *model.Client {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	c := s.clients[cfg.Model]
	if c == nil {
		c = model.New(cfg, s.opts.HTTPClient)
		s.clients[cfg.Model] = c
	}
	return c
}

// SessionOptions are what a new session starts with.
type SessionOptions struct {
	Title string
	// Roots are the folders its tools work in (the first is its working
	// directory). The caller decides them; kin keeps them in the session's
	// first record.
	Roots []string
	// Mode is how much kin may do without asking; "" is agent.
	Mode permission.Mode
	// Model and Effort are the session's choice ("": the default model,
	// the service's effort).
	Model, Effort string
	// Origin says what makes the session when it is not a person at an
	// editor (session.Info.Origin): "chat-oneshot", "chat-piped".
	Origin string
	// Worktree, when set, gives the session a git worktree of its own
	// (worktrees.go): made from the repository of the first root, which
	// it replaces.
	Worktree *WorktreeOptions
}

// Opened is a session as session/new and session/resume describe it.
type Opened struct {
	Info          session.Info
	Mode          permission.Mode
	Model, Effort string
	// Instructions are the instructions files in force.
	Instructions []session.InstructionFile
}

// NewSession creates a session, records its model and the instructions in
// force, and keeps it open.
func (s *Service) NewSession(o SessionOptions) (Opened, error) {
	mode, err := permission.ParseMode(string(o.Mode))
	if err != nil {
		return Opened{}, fmt.Errorf("%w: %v", ErrBadParams, err)
	}
	m, effort, err := s.choose(o.Model, o.Effort, "")
	if err != nil {
		return Opened{}, err
	}
	if !session.ValidOrigin(o.Origin) {
		return Opened{}, fmt.Errorf("%w: origin %q is not a short name of lower-case letters, digits and dashes", ErrBadParams, o.Origin)
	}
	// The mode as parsed: the default is written as itself (agent), so the
	// log says what the person had.
	info, log, roots, err := s.createSession(o, mode)
	if err != nil {
		return Opened{}, err
	}
	sess := &Session{id: info.SessionID, svc: s, log: log, conv: newConvo(), known: true, roots: roots, title: info.Title,
		mode: mode, model: m.Model, effort: effort, created: true}
	instr, err := s.register(sess, log, m.Model, effort)
	if err != nil {
		return Opened{}, err
	}
	s.folderNotice(sess)
	return Opened{Info: info, Mode: mode, Model: m.Model, Effort: effort, Instructions: instr}, nil
}

// register records a new session's model and the instructions in force
// for it, durably, and keeps it open; the log goes when that fails.
func (s *Service) register(sess *Session, log *session.Log, model, effort string) ([]session.InstructionFile, error) {
	instr := s.instructionFiles(sess.roots, sess.dirs)
	for _, r := range []session.Record{
		{Type: session.TypeConfigure, Model: model, Effort: effort, Reason: session.ConfigureNew},
		{Type: session.TypeInstructions, Files: instr},
	} {
		if _, err := sess.append(r); err != nil {
			log.Delete()
			return nil, err
		}
	}
	if err := sess.sync(); err != nil {
		log.Delete()
		return nil, err
	}
	s.mu.Lock()
	s.sessions[sess.id] = sess
	s.mu.Unlock()
	return instr, nil
}

// folderNotice tells the person, when a session starts, that its folder is
// their home folder or the file system's root (the trust boundary says
// what that means): credentials and kin's home are in reach of commands.
// It also starts the look at the workspace the first command needs
// (warmCommands).
func (s *Service) folderNotice(sess *Session) {
	ws := sess.toolEnv("", "").Workspace
	s.warmCommands(ws)
	if ws == nil || s.opts.Events == nil {
		return
	}
	if msg := ws.Notice(); msg != "" {
		s.opts.Events.Notice(Notice{Level: "warning", Source: "workspace", SessionID: sess.id, Message: msg})
	}
}

// choose checks a model and effort ("" model: current, else the default)
// and returns the model and the effort to keep. An effort the chosen model
// does not take is refused when it was asked for, dropped when it was the
// session's earlier one.
func (s *Service) choose(id, effort, current string) (model.Config, string, error) {
	if id == "" {
		id = current
	}
	if id == "" {
		id = s.models.Default
	}
	m, ok := s.models.Find(id)
	if !ok {
		return model.Config{}, "", fmt.Errorf("%w: kin has no model %q (it has %s; models in $KIN_HOME/settings.json lists them)", ErrBadChoice, id, s.models.IDs())
	}
	if !m.TakesEffort(effort) {
		if len(m.Efforts) == 0 {
			return model.Config{}, "", fmt.Errorf("%w: the model %s takes no effort setting (efforts in $KIN_HOME/settings.json lists what a model takes)", ErrBadChoice, m.Model)
		}
		return model.Config{}, "", fmt.Errorf("%w: the model %s takes effort %s, not %q", ErrBadChoice, m.Model, strings.Join(m.Efforts, ", "), effort)
	}
	return m, effort, nil
}

// instructionFiles are the instructions files in force for roots and the
// directories below them, as the log records them.
func (s *Service) instructionFiles(roots, dirs []string) []session.InstructionFile {
	set, _ := s.inForce(roots, s.loader.Load(s.opts.Home, roots, dirs))
	return recorded(set.Files)
}

func recorded(fs []instructions.File) []session.InstructionFile {
	out := make([]session.InstructionFile, len(fs))
	for i, f := range fs {
		out[i] = session.InstructionFile{Path: f.Path, Bytes: f.Bytes, Hash: f.Hash, Cut: f.Cut}
	}
	return out
}

// ListSessions lists stored sessions, newest first, from the index (the
// slice is shared: do not change it).
func (s *Service) ListSessions() ([]session.Info, error) { return s.store.List() }

// ResumeOptions pick the page of history a resume returns.
type ResumeOptions struct {
	Limit  int    // items; 0 means DefaultHistoryPage
	Before string // a Cursor from an earlier resume: the page before it
	// DefaultRoots serve a session recorded before sessions kept their
	// roots.
	DefaultRoots []string
}

// Resumed is a session as an editor redraws it.
type Resumed struct {
	Opened
	History []session.HistoryItem // oldest first
	// Cursor is the Before of the next older page ("" at the beginning).
	Cursor string
	// ReadOnly says why turns cannot run here (nil: they can).
	ReadOnly error
	// RunningTurnID is the turn this kin runs on the session now ("" when
	// none); turn/cancel stops it.
	RunningTurnID string
	// Findings are the session's review findings, oldest first (the
	// latest session.MaxFindings), whatever page History is.
	Findings []session.Finding
	// Following says this kin follows tasks a stopped kin left running on
	// the session (its calls', or its subagents'): their MCP servers are
	// needed, whatever page History is.
	Following bool
}

// Resume opens a session (taking its ownership when no other kin has it)
// and returns one page of its history, newest first by default.
func (s *Service) Resume(id string, o ResumeOptions) (Resumed, error) {
	q := session.Query{Limit: o.Limit, Before: o.Before}
	if q.Limit <= 0 {
		q.Limit = DefaultHistoryPage
	}
	sess, v, err := s.open(id, o.DefaultRoots, q)
	if err != nil {
		return Resumed{}, err
	}
	running := sess.runningTurn()
	switch {
	case v != nil && running == nil:
		s.store.Remember(id, q, v) // the next resume of this page reads nothing while the log is unchanged
	case v == nil:
		if running != nil && running.answer != nil {
			running.answer.flush() // so the page shows all that streamed
		}
		if v, err = s.store.CachedView(id, q); err != nil {
			return Resumed{}, err
		}
	}
	page := v.Page()
	m, effort := sess.choice()
	if m == "" {
		m = s.models.Default
	}
	opened := Opened{Info: v.Info, Model: m, Effort: effort, Instructions: s.instructionFiles(sess.sessionRoots(), sess.instructionDirs())}
	if o.Before == "" {
		s.folderNotice(sess)
	}
	out := Resumed{Opened: opened, History: page.Items, Cursor: page.Cursor, ReadOnly: sess.readOnly(), Findings: v.Findings(),
		Following: s.followsAny(id)}
	if running != nil {
		out.RunningTurnID = running.turnID
	}
	if errors.Is(out.ReadOnly, session.ErrOwned) {
		// an undo or rollback without its outcome may be running there
		out.History = session.OwnedElsewhere(out.History)
	}
	return out, nil
}

// DeleteSession removes a session that is not running a turn and that no
// other kin has open.
func (s *Service) DeleteSession(id string) error {
	s.mu.Lock()
	sess := s.sessions[id]
	s.mu.Unlock()
	var err error
	if sess != nil {
		sess.settled()
		busy := sess.running != nil
		sess.mu.Unlock()
		if busy {
			return ErrTurnRunning
		}
		err = sess.delete()
	} else {
		err = s.store.Delete(id)
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.sessions, id)
	s.mu.Unlock()
	if err := s.checkpoints.Delete(id); err != nil {
		s.log.Warn("removing a deleted session's checkpoints", zap.String("session", id), zap.Error(err))
	}
	if err := s.forgetWorktree(id); err != nil {
		s.log.Warn("removing a deleted session's worktree record", zap.String("session", id), zap.Error(err))
	}
	if g := s.opts.Gate; g != nil {
		g.Grants().DropSession(id)
	}
	s.stopFollowing(id)
	s.deleteSubagents(id)
	return nil
}

// StartTurn begins a turn and returns its id at once. defaultRoots serve a
// session recorded before sessions kept their roots. A part kin cannot
// take refuses the question (a *PartError) before anything is sent.
func (s *Service) StartTurn(sessionID string, in Input, defaultRoots []string) (string, error) {
	return s.startTurn(sessionID, in, defaultRoots, turnSpec{})
}

// startTurn is StartTurn for a turn with a spec (a review's).
func (s *Service) startTurn(sessionID string, in Input, defaultRoots []string, spec turnSpec) (string, error) {
	sess, _, err := s.open(sessionID, defaultRoots, session.Query{})
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	ctx = tool.WithStopping(ctx, s.stopping.Load)
	r := &running{turnID: newTurnID(), cancel: func() { cancel(nil) }, stop: cancel, done: make(chan struct{})}
	release := func() {
		sess.mu.Lock()
		sess.running = nil
		sess.mu.Unlock()
	}
	t := &turn{svc: s, sess: sess, id: r.turnID, budget: s.maxCalls, abort: cancel, release: release, spec: spec}
	t.answer = newAnswer(t)
	r.answer, r.turn = t.answer, t
	if err := sess.reserve(r); err != nil {
		cancel(nil)
		return "", err
	}
	// Refused before it began: whoever waits on the turn is let go.
	refuse := func(err error) (string, error) {
		release()
		close(r.done)
		cancel(nil)
		return "", err
	}
	cfg, fellBack := s.sessionModel(sess)
	if m := cfg.Missing(); m != "" {
		return refuse(fmt.Errorf("%w: %s", ErrNotConfigured, m))
	}
	env := sess.toolEnv(r.turnID, "")
	q, err := assemble(in, env, cfg, s.opts.Tools.Tools, s.resourceReader(ctx, sess.id))
	if err != nil {
		return refuse(err)
	}
	_, effort := sess.choice()
	t.question, t.cfg, t.effort, t.fellBack, t.client = q, cfg, effort, fellBack, s.client(cfg)
	s.worktreeNotice(sess)

	s.turns.Add(1)
	go func() {
		defer s.turns.Done()
		defer close(r.done)
		defer cancel(nil)
		t.run(ctx)
	}()
	return r.turnID, nil
}

// Settle returns once no cancelled turn is still ending on the session.
func (s *Service) Settle(sessionID string) {
	s.mu.Lock()
	sess := s.sessions[sessionID]
	s.mu.Unlock()
	if sess != nil {
		sess.settled()
		sess.mu.Unlock()
	}
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
		if sess.runningTurn() != nil {
			return true
		}
	}
	return false
}

// Stopping says kin has begun to stop, before a front end withdraws the
// questions it put to the person (its broker's Close) and calls Shutdown:
// a task's question withdrawn so is not the person declining it, and the
// task is left running (tool.Stopping).
func (s *Service) Stopping() { s.stopping.Store(true) }

// Shutdown cancels every running turn, waits for them to record how they
// ended, closes the session logs (giving up their ownership) and waits for
// the day's usage to be written. kin, not the person, ends the turns
// (tool.ErrStopping): a call running as an MCP task on record is left
// running and open in the log, for the next kin to follow (settle).
func (s *Service) Shutdown() {
	s.Stopping()
	s.mu.Lock()
	var all []*Session
	for _, sess := range s.sessions {
		all = append(all, sess)
	}
	s.mu.Unlock()
	// The person's sessions first: their subagents' turns end with the
	// same cause (their contexts are their parents'), so a delegate call
	// whose subagent left a task open finds its own turn stopping too.
	sort.SliceStable(all, func(i, j int) bool { return all[i].depth() < all[j].depth() })
	for _, sess := range all {
		if r := sess.runningTurn(); r != nil {
			if r.stop != nil {
				r.stop(tool.ErrStopping)
			} else {
				r.cancel()
			}
		}
	}
	s.turns.Wait()
	for _, sess := range all {
		sess.close()
	}
	// the day's usage written, and this kin's liveness file given up
	s.spend.day.Close()
	sandbox.Settle() // the placeholders of ended commands, removed in the background
}

func newTurnID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "t_" + hex.EncodeToString(b[:])
}

// RecordElicitation notes in a session's log that an MCP server asked the
// person something and how it was answered (never the answer itself), so
// resume shows it and a headless decline is on record. Only an open session
// this kin owns is written.
func (s *Service) RecordElicitation(sessionID, requestID, server, mode, message, action, reason string) {
	s.mu.Lock()
	sess := s.sessions[sessionID]
	s.mu.Unlock()
	if sess == nil {
		return
	}
	if _, err := sess.append(session.Record{Type: session.TypeElicit, RequestID: requestID, Server: server, Mode: mode,
		Title: message, Decision: action, Reason: reason}); err != nil && !errors.Is(err, errNotOwner) && !errors.Is(err, session.ErrReadOnly) {
		s.log.Error("session log write failed", zap.String("session", sessionID), zap.Error(err))
	}
}
