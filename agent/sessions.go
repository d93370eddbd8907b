package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/agent/toolsearch"
)

// Session is a session this Service has opened: owned (its log open for
// appending, locked against every other kin) or, while another kin owns it,
// shown read-only.
type Session struct {
	id  string
	svc *Service

	// wmu serialises writing and the conversation the writes extend. It is
	// never held while waiting on a person or the model.
	wmu sync.Mutex
	// log is nil while this kin does not own the session.
	log *session.Log
	// conv is the model's view, read from the log at the first turn.
	conv *convo
	// owed are records that close a call or a turn but could not be
	// written (a full disk); they are written before anything else.
	owed []session.Record

	// modeMu serialises mode changes (record, then apply).
	modeMu sync.Mutex
	// mu guards known, roots, title, mode, plan, model, effort, dirs,
	// running and notOwned.
	mu     sync.Mutex
	known  bool // roots, title, mode, model and effort were read
	roots  []string
	title  string
	mode   permission.Mode
	plan   []session.PlanEntry // the model's last plan
	model  string              // the session's model ("": the default)
	effort string
	dirs   []string // directories below the roots whose instructions are in force
	// leftInstr names the instructions files last left out (to keep within
	// instructions.MaxTotal), so the person is told once per change.
	leftInstr string
	running   *running
	// held is set while an undo puts files back: no turn may start.
	held bool
	// puttingBack is held (locked) by a rollback or an undo for as long as
	// it runs, from before its first record to after its outcome; a fork
	// of the session taken in this kin reads its log under it (read-locked),
	// so it never copies the first record without the outcome.
	puttingBack sync.RWMutex
	// notOwned says why turns cannot run here (nil: they can).
	notOwned error
	// lineage is set on a subagent's session (its first record says the
	// same); parent is its parent session while the subagent runs here.
	lineage *session.Lineage
	parent  *Session
	// declined are the items (id=digest) the person said "not now" to
	// (trusted.go): not asked about again in this session.
	declined map[string]bool
	// created says the session was made by this kin (SessionStart's
	// source is startup; else resume).
	created bool
	// extSaid is the last report of unreadable skills and hooks, said once.
	extSaid string
	// started says the session's SessionStart hooks ran in this process;
	// startContext is what they added for the model.
	started      bool
	startContext string
	// loaded are the skills the model loaded (use_skill), in the order it
	// loaded them, each with its turn (a rollback unloads a turn's): the
	// latest of a name is in force; their folders are readable to
	// read_file, their allowed-tools narrow.
	loaded []loadedSkill
	// skillsRestored: the skills the conversation loaded before this kin
	// were loaded again (skillrestore.go).
	skillsRestored bool
	// withheldSaid names the instruction files last said to be withheld.
	withheldSaid string

	// found are the deferred MCP tools the model found (agent/toolsearch).
	found toolsearch.Found
}

type running struct {
	turnID string // "" while compacting on request
	cancel func()
	// stop, for a turn, cancels it with a cause (tool.ErrStopping when kin
	// stops: Service.Shutdown); nil: cancel.
	stop      context.CancelCauseFunc
	cancelled bool // CancelTurn was called (guarded by the session's mu)
	done      chan struct{}
	answer    *answer
	turn      *turn // the person's turn, for turn/steer (nil while compacting)
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

var errNotOwner = errors.New("this kin does not own the session")

// open returns the session, opening it on first use and taking its
// ownership when it is free (also on later calls, once the kin that had it
// let go). When it had to read the log to do so, it returns what it read
// (with the page q asked for), so the caller need not read it again.
func (s *Service) open(id string, defaultRoots []string, q session.Query) (*Session, *session.View, error) {
	// The session is made (or found) under the service's lock, and its log
	// is read under the session's own (own takes sess.wmu): a first resume
	// of a long session never holds up a turn on another one.
	s.mu.Lock()
	sess := s.sessions[id]
	fresh := sess == nil
	if fresh {
		sess = &Session{id: id, svc: s}
		s.sessions[id] = sess
	}
	s.mu.Unlock()
	v, err := sess.own(defaultRoots, q)
	if err != nil {
		sess.mu.Lock()
		known := sess.known
		sess.mu.Unlock()
		if fresh && !known {
			s.mu.Lock()
			if s.sessions[id] == sess {
				delete(s.sessions, id)
			}
			s.mu.Unlock()
		}
		return nil, nil, err
	}
	return sess, v, nil
}

// viewRoots are the roots a session's log records, defaultRoots where it
// records none.
func viewRoots(v *session.View, defaultRoots []string) []string {
	if roots := v.Roots(); roots != nil {
		return roots
	}
	return defaultRoots
}

// viewMode is the mode a session's log records.
func viewMode(v *session.View) permission.Mode {
	mode, err := permission.ParseMode(v.Info.Mode)
	if err != nil {
		return permission.ModeAgent // a log from a newer kin: the default asks for everything
	}
	return mode
}

// own takes the session's log when this kin does not have it yet. As owner
// it closes what a stopped kin left open: a call without a result, a turn
// without an end (see session.View.Repairs). A session another kin owns is
// only read, and nothing in it is closed.
func (sess *Session) own(defaultRoots []string, q session.Query) (*session.View, error) {
	sess.wmu.Lock()
	defer sess.wmu.Unlock()
	if sess.log != nil {
		return nil, nil
	}
	st := sess.svc.store
	log, err := st.Open(sess.id)
	if err != nil && !errors.Is(err, session.ErrOwned) {
		return nil, err
	}
	sess.mu.Lock()
	known := sess.known
	if log == nil && known && sess.lineage == nil {
		sess.notOwned = err // this kin may have had it before (Release)
	}
	sess.mu.Unlock()
	if log == nil && known && q.Limit == 0 {
		return nil, nil // still another kin's; nothing new to read
	}
	v, verr := st.View(sess.id, q)
	if verr != nil {
		if log != nil {
			log.Close()
		}
		return nil, verr
	}
	roots, mode := viewRoots(v, defaultRoots), viewMode(v)
	sess.mu.Lock()
	sess.known, sess.roots, sess.title, sess.mode, sess.plan, sess.notOwned = true, roots, v.Info.Title, mode, v.Plan(), err
	sess.model, sess.effort, sess.dirs = v.Model(), v.Effort(), dirsOf(v.Instructions(), roots)
	sess.lineage = v.Parent()
	if sess.lineage != nil {
		// Whoever has its log: it takes no turn of its own.
		sess.notOwned = subagentReadOnly{parent: sess.lineage.SessionID}
	}
	sess.mu.Unlock()
	if log == nil {
		return v, nil
	}
	sess.log = log
	if ro := log.ReadOnly(); ro != nil {
		sess.mu.Lock()
		if sess.lineage == nil {
			sess.notOwned = ro
		}
		sess.mu.Unlock()
	} else {
		st.Refresh(v.Info)
	}
	writable := log.ReadOnly() == nil
	closing, tasks := sess.svc.closeTasks(v, writable)
	repairs, waiting := sess.svc.repairSubagents(sess.id, closing, sess.svc.followsTasks(v, writable))
	for _, r := range repairs {
		r.Time = time.Now().UTC()
		off, _, err := log.Append(r)
		if err != nil {
			off = -1 // shown, written once the log can be written
			sess.owed = append(sess.owed, r)
		}
		v.Add(r, off)
	}
	if len(repairs) > 0 {
		if err := log.Sync(); err != nil {
			sess.svc.log.Error("session log sync failed", zap.String("session", sess.id), zap.Error(err))
		}
	}
	sess.svc.followTasks(sess, tasks)
	for _, c := range waiting {
		v.Waiting(c.call.CallID, c.call.Subagent)
	}
	sess.svc.followChildren(sess, waiting)
	return v, nil
}

func (sess *Session) readOnly() error {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.notOwned
}

func (sess *Session) runningTurn() *running {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.running
}

// hold keeps turns from starting while an undo puts the session's files
// back; it is false when a turn runs (or another undo holds the session).
// A cancelled turn still ending is waited for.
func (sess *Session) hold() bool {
	sess.settled()
	defer sess.mu.Unlock()
	if sess.running != nil || sess.held {
		return false
	}
	sess.held = true
	return true
}

func (sess *Session) unhold() {
	sess.mu.Lock()
	sess.held = false
	sess.mu.Unlock()
}

// currentMode is the mode the session's calls are decided in: its own,
// and for a subagent never wider than its parent's now (a parent switched
// to ask mode narrows its running subagents at once).
func (sess *Session) currentMode() permission.Mode {
	sess.mu.Lock()
	mode, parent := sess.mode, sess.parent
	sess.mu.Unlock()
	if parent != nil {
		return permission.Narrower(mode, parent.currentMode())
	}
	return mode
}

func (sess *Session) sessionRoots() []string {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.roots
}

// toolEnv is what a call of the session's tools may know: its roots and
// the trust boundary around them, its file access. The boundary opens one
// os.Root per root for the whole process, once, and again only when the
// folder at that path is another one (deleted and cloned again): asking
// it for every call costs a stat per root.
func (sess *Session) toolEnv(turnID, callID string) tool.Env {
	return sess.toolEnvFor(turnID, callID, true)
}

// toolEnvFor is toolEnv; skills says whether the folders of the skills
// the session loaded are granted for reading (the model's calls: yes; an
// agent hook's judge: no, it reads the workspace only).
func (sess *Session) toolEnvFor(turnID, callID string, skills bool) tool.Env {
	roots := sess.sessionRoots()
	var ws *boundary.Workspace
	if len(roots) > 0 {
		ws, _ = boundary.NewWorkspace(roots, sess.svc.opts.Home) // nil: the tools say why
		if dirs := sess.skillFolders(); skills && ws != nil && len(dirs) > 0 {
			ws = ws.GrantRead(dirs...) // the loaded skills' files, for read_file
		}
	}
	return tool.Env{SessionID: sess.id, TurnID: turnID, CallID: callID, Roots: roots, Files: sess.files(),
		Workspace: ws, KinHome: sess.svc.opts.Home}
}

// conversation loads the model's view from the log on first use.
func (sess *Session) conversation() (*convo, error) {
	sess.wmu.Lock()
	defer sess.wmu.Unlock()
	if sess.conv != nil {
		return sess.conv, nil
	}
	if sess.log == nil {
		return nil, errNotOwner
	}
	c := newConvo()
	if err := sess.log.Each(c.add); err != nil {
		return nil, err
	}
	for _, r := range sess.owed {
		c.add(r, 0, 0)
	}
	sess.conv = c
	return c, nil
}

// pendingUnknown lists calls that ended unknown and are not acknowledged.
func (sess *Session) pendingUnknown() []session.Unknown {
	sess.wmu.Lock()
	defer sess.wmu.Unlock()
	if sess.conv == nil {
		return nil
	}
	return append([]session.Unknown(nil), sess.conv.unknown...)
}

// input builds the next request's input.
func (sess *Session) input(v view) ([]model.Item, error) {
	c, err := sess.conversation()
	if err != nil {
		return nil, err
	}
	sess.wmu.Lock()
	defer sess.wmu.Unlock()
	if sess.log == nil {
		return nil, errNotOwner
	}
	return c.model(sess.log.ReadAt, v), nil
}

// choice is the session's model and effort.
func (sess *Session) choice() (string, string) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.model, sess.effort
}

// instructionDirs are the directories below the roots whose instructions
// are in force.
func (sess *Session) instructionDirs() []string {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.dirs
}

// dirsOf are the directories below the roots that hold the instructions
// files of a record (a file in a root, or in KIN_HOME, is not below one).
func dirsOf(files []session.InstructionFile, roots []string) []string {
	var out []string
	for _, f := range files {
		d := filepath.Dir(f.Path)
		for _, r := range roots {
			if d != r && strings.HasPrefix(d, r+string(filepath.Separator)) {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// append writes a record to the log (fitted to the caps; the fitted record
// is returned) and extends the conversation with it. It only writes: see
// sync.
func (sess *Session) append(r session.Record) (session.Record, error) {
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	r = session.Fit(r)
	sess.wmu.Lock()
	defer sess.wmu.Unlock()
	if sess.log == nil {
		return r, errNotOwner
	}
	for len(sess.owed) > 0 {
		if _, _, err := sess.log.Append(sess.owed[0]); err != nil {
			return r, err
		}
		sess.owed = sess.owed[1:]
	}
	off, n, err := sess.log.Append(r)
	if err != nil {
		return r, err
	}
	if sess.conv != nil {
		sess.conv.add(r, off, n)
	}
	return r, nil
}

// owe keeps a closing record that could not be written: the conversation
// has it now, the log gets it before the next record.
func (sess *Session) owe(r session.Record) {
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	r = session.Fit(r)
	sess.wmu.Lock()
	defer sess.wmu.Unlock()
	sess.owed = append(sess.owed, r)
	if sess.conv != nil {
		sess.conv.add(r, 0, 0)
	}
}

// appendSynced appends r and makes it durable, for a record the next step
// depends on (a rollback's or an undo's first record and its outcome): a
// write that fails is logged and returned; a sync that fails is logged only
// (the record is written, only a power cut could lose it).
func (sess *Session) appendSynced(r session.Record) error {
	if _, err := sess.append(r); err != nil {
		sess.svc.log.Error("session log write failed", zap.String("session", sess.id), zap.Error(err))
		return err
	}
	if err := sess.sync(); err != nil {
		sess.svc.log.Error("session log sync failed", zap.String("session", sess.id), zap.Error(err))
	}
	return nil
}

// sync makes what was appended durable.
func (sess *Session) sync() error {
	sess.wmu.Lock()
	defer sess.wmu.Unlock()
	if sess.log == nil {
		return errNotOwner
	}
	if len(sess.owed) > 0 {
		return fmt.Errorf("saving the session: %d records are still waiting to be written", len(sess.owed))
	}
	return sess.log.Sync()
}

func (sess *Session) delete() error {
	sess.wmu.Lock()
	defer sess.wmu.Unlock()
	if sess.log == nil {
		return sess.svc.store.Delete(sess.id)
	}
	err := sess.log.Delete()
	sess.log = nil
	return err
}

// Release gives up this kin's ownership of a session the front end is
// done with (ACP's session/close), and of its subagents' sessions: their
// logs are closed, so another kin can take them, and the next open here
// takes a log again when it is free, reading it anew (another kin may have
// added to it meanwhile). A session with a turn running or starting, an
// undo, a task followed or records still owed to its log is left as it
// is: the connection's end closes it.
func (s *Service) Release(id string) {
	if s.followsAny(id) {
		return
	}
	s.mu.Lock()
	parent := s.sessions[id]
	var all []*Session
	for _, sess := range s.sessions {
		all = append(all, sess)
	}
	s.mu.Unlock()
	if parent == nil || !parent.release() {
		return // its subagents' sessions stay with it
	}
	for _, sess := range all {
		sess.mu.Lock()
		child := sess.lineage != nil && sess.lineage.SessionID == id
		sess.mu.Unlock()
		if child {
			sess.release()
		}
	}
}

// release closes the session's log unless something still writes it; it
// reports whether the log is closed.
func (sess *Session) release() bool {
	// held keeps a turn from starting while the log closes.
	if !sess.hold() {
		return false
	}
	defer sess.unhold()
	sess.wmu.Lock()
	defer sess.wmu.Unlock()
	if sess.log == nil {
		return true
	}
	if len(sess.owed) > 0 {
		return false
	}
	if err := sess.log.Close(); err != nil {
		sess.svc.log.Error("closing a session log", zap.String("session", sess.id), zap.Error(err))
	}
	sess.log, sess.conv = nil, nil
	// What the turns brought is derived from the log again when this kin
	// takes it next (the skills at its first turn, the tools found at its
	// first request): another kin may roll turns back meanwhile.
	sess.mu.Lock()
	sess.loaded, sess.skillsRestored = nil, false
	sess.mu.Unlock()
	sess.found.Reset()
	return true
}

func (sess *Session) close() {
	sess.wmu.Lock()
	defer sess.wmu.Unlock()
	if sess.log != nil {
		if err := sess.log.Close(); err != nil {
			sess.svc.log.Error("closing a session log", zap.String("session", sess.id), zap.Error(err))
		}
		sess.log = nil
	}
}
