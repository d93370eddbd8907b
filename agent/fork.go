package agent

import (
	"fmt"
	"slices"
	"sync"

	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
)

// Fork makes a new session whose history is the original's up to and
// including turnID ("" takes every ended turn), with the original's model,
// effort, mode and roots as they are now. The original is only read: its
// log, checkpoints and grants are untouched, and a turn it runs goes on.
// The fork's own turns start from there; undo in the fork reaches only its
// own turns (the original's checkpoints stay the original's), and grants
// given "for this session" in the original do not carry over. A fork of a
// worktree session works in the same worktree (worktrees.go).
func (s *Service) Fork(sessionID, turnID string, defaultRoots []string) (Opened, error) {
	src, err := s.forkSource(sessionID, defaultRoots)
	if err != nil {
		return Opened{}, err
	}
	lineage, running, title, roots, mode := src.lineage, src.running, src.title, src.roots, src.mode
	if lineage != nil {
		return Opened{}, fmt.Errorf("%w: %s is a subagent's session; fork its parent %s instead", ErrBadParams, sessionID, lineage.SessionID)
	}
	if turnID != "" && turnID == running {
		return Opened{}, fmt.Errorf("%w: turn %s is still running; fork at a turn that has ended, or leave turnId out", ErrBadParams, turnID)
	}
	// A rollback or undo of the original running in this kin is let
	// finish first: between its two records the log says it is unfinished,
	// which the copy would keep for good (and, cut at the log's end, give
	// the fork's model turns as done whose files are being put back). One
	// running in another kin cannot be told from one a stopped kin left:
	// the fork copies it unfinished, as resuming the original shows it.
	done := s.puttingBackWait(sessionID)
	defer done()
	// Two passes over the original, a record at a time (a log can be
	// many MB of tool outputs): the first finds the cut and what the copy
	// needs to know of the rest, the second copies up to the cut.
	rd, err := s.store.Reader(sessionID)
	if err != nil {
		return Opened{}, err
	}
	defer rd.Close()
	scan, err := scanForFork(rd, turnID)
	if err != nil {
		return Opened{}, err
	}
	if scan.cut < 0 {
		return Opened{}, fmt.Errorf("%w: session %s has no ended turn %s", ErrBadParams, sessionID, turnID)
	}
	if scan.rolledBack {
		return Opened{}, fmt.Errorf("%w: turn %s was rolled back (its files were put back); fork at a turn still in the conversation, or leave turnId out", ErrBadParams, turnID)
	}
	cfg, effort, err := s.choose(src.model, src.effort, "")
	if err != nil {
		// The original's model is gone from settings: the fork takes the
		// default, as a resumed session would.
		if cfg, effort, err = s.choose("", "", ""); err != nil {
			return Opened{}, err
		}
	}
	if title != "" {
		title += " (fork)"
	}
	var plans session.Plans // the plan in force in what is copied (rollbacks too)
	copyTo := func(write func(session.Record) error) error {
		var calls []session.Record // the copied calls, without their arguments
		answered := map[string]bool{}
		err := rd.Each(scan.cut, func(r session.Record, _ int64) error {
			if !forkCopies(r, scan.ended) {
				return nil
			}
			plans.Add(r)
			switch r.Type {
			case session.TypeCall:
				calls = append(calls, session.Record{TurnID: r.TurnID, CallID: r.CallID, Name: r.Name})
			case session.TypeResult:
				answered[r.CallID] = true
			}
			return write(r)
		})
		if err != nil {
			return err
		}
		for _, r := range closeCopiedCalls(sessionID, calls, answered, scan.late, scan.ended) {
			if err := write(r); err != nil {
				return err
			}
		}
		// Written whole before it is a session: a kin stopped while
		// copying leaves no session holding half the history without its
		// fork record.
		return write(session.Record{Type: session.TypeFork, Fork: &session.ForkRef{SessionID: sessionID, TurnID: turnID}})
	}
	info, log, err := s.store.CreateWith(title, roots, string(mode), copyTo)
	done()
	if err != nil {
		return Opened{}, err
	}
	plan := plans.Current()
	// (its conversation is read from the log at its first turn)
	sess := &Session{id: info.SessionID, svc: s, log: log, known: true, roots: roots, title: title,
		mode: mode, plan: plan, model: cfg.Model, effort: effort, created: true}
	// the fork has the original's roots, so it works in the original's
	// worktree: recorded, so worktree/status and apply answer from it and
	// removing the worktree from either session sees the other
	if err := s.shareWorktree(sessionID, info.SessionID); err != nil {
		log.Delete()
		return Opened{}, err
	}
	instr, err := s.register(sess, log, cfg.Model, effort)
	if err != nil {
		return Opened{}, err
	}
	if v, err := s.store.View(info.SessionID, session.Query{}); err == nil {
		s.store.Refresh(v.Info)
		info = v.Info
	}
	return Opened{Info: info, Mode: mode, Model: cfg.Model, Effort: effort, Instructions: instr}, nil
}

// puttingBackWait waits while this kin rolls back or undoes the session,
// and keeps another from starting until done is called (done may be
// called again: only the first call counts).
func (s *Service) puttingBackWait(id string) (done func()) {
	s.mu.Lock()
	sess := s.sessions[id]
	s.mu.Unlock()
	if sess == nil {
		return func() {}
	}
	sess.puttingBack.RLock()
	return sync.OnceFunc(sess.puttingBack.RUnlock)
}

// forkCopies says whether a fork takes a record of the original: not its
// first record, title, model and mode choices (the fork starts with the
// original's current ones), nor anything of a turn that has not ended.
func forkCopies(r session.Record, ended map[string]bool) bool {
	switch r.Type {
	case session.TypeSession, session.TypeTitle, session.TypeConfigure, session.TypeMode:
		return false
	}
	return r.TurnID == "" || ended[r.TurnID]
}

// forkFrom is what a fork takes from its original.
type forkFrom struct {
	title, model, effort string
	roots                []string
	mode                 permission.Mode
	lineage              *session.Lineage
	running              string // the turn this kin runs on it ("": none)
}

// forkSource reads the original as it is now: from the session when this
// kin has it open, else from its log. A fork only reads: opening the
// original here would take its ownership (another window could then
// only read it, as long as this kin runs), write its repairs, and follow
// the MCP tasks a stopped kin left in it.
func (s *Service) forkSource(id string, defaultRoots []string) (forkFrom, error) {
	s.mu.Lock()
	src := s.sessions[id]
	s.mu.Unlock()
	if src != nil {
		src.mu.Lock()
		f := forkFrom{title: src.title, model: src.model, effort: src.effort, roots: src.roots, mode: src.mode, lineage: src.lineage}
		if src.running != nil {
			f.running = src.running.turnID
		}
		known := src.known
		src.mu.Unlock()
		if known {
			return f, nil
		}
	}
	v, err := s.store.View(id, session.Query{})
	if err != nil {
		return forkFrom{}, err
	}
	return forkFrom{title: v.Info.Title, model: v.Model(), effort: v.Effort(), roots: viewRoots(v, defaultRoots), mode: viewMode(v),
		lineage: v.Parent()}, nil
}

// forkScan is what a fork's first pass over the original found.
type forkScan struct {
	// cut is the offset the copy ends at: just past the cut turn's end
	// record (-1: no such turn), or every record when the fork takes all.
	cut int64
	// ended are the turns with an end record before the cut: only those
	// are copied (a turn running here or in another kin, or left open by a
	// stopped one, is not the fork's).
	ended map[string]bool
	// late are the results recorded after the cut of calls made before it
	// (a task a restarted kin followed): the call's own.
	late []session.Record
	// rolledBack: a rollback, before or after the cut, took out the turn
	// cut at. The copy would stop before that rollback's record and give
	// the fork's model those turns as done, while their files were put
	// back on the disk the fork shares with the original.
	rolledBack bool
}

// scanForFork is a fork's first pass: it keeps only small things (turn
// and call ids) and the late results.
func scanForFork(rd *session.Reader, turnID string) (forkScan, error) {
	sc := forkScan{cut: -1, ended: map[string]bool{}}
	open := map[string]bool{} // calls before the cut without a result (yet)
	var last int64
	err := rd.Each(-1, func(r session.Record, next int64) error {
		if r.Type == session.TypeRollback && r.Rollback != nil && turnID != "" && slices.Contains(r.Rollback.Turns, turnID) {
			sc.rolledBack = true
		}
		if sc.cut >= 0 {
			if r.Type == session.TypeResult && open[r.CallID] {
				delete(open, r.CallID)
				sc.late = append(sc.late, r)
			}
			return nil
		}
		last = next
		switch r.Type {
		case session.TypeTurn:
			sc.ended[r.TurnID] = true
			if turnID != "" && r.TurnID == turnID {
				sc.cut = next
			}
		case session.TypeCall:
			open[r.CallID] = true
		case session.TypeResult:
			delete(open, r.CallID)
		}
		return nil
	})
	if err != nil {
		return forkScan{}, err
	}
	if turnID == "" {
		sc.cut = last
	}
	return sc, nil
}

// closeCopiedCalls are the results a fork adds for the calls it copied
// without one (answered: those with one). A call of an ended turn can get
// its result later (an MCP task a restarted kin followed, a subagent's
// delegate call): a result recorded after the fork's cut (late) is the
// call's own, and is taken; a call still waiting is closed as unknown,
// since its task is the original's to follow (no kin follows it for the
// fork, and one following it again after a restart would poll the
// original's task twice).
func closeCopiedCalls(from string, calls []session.Record, answered map[string]bool, late []session.Record, ended map[string]bool) []session.Record {
	var out []session.Record
	open := map[string]bool{}
	for _, c := range calls {
		if !answered[c.CallID] {
			open[c.CallID] = true
		}
	}
	for _, r := range late {
		if r.Type == session.TypeResult && open[r.CallID] && ended[r.TurnID] {
			out = append(out, r)
			delete(open, r.CallID)
		}
	}
	for _, c := range calls {
		if open[c.CallID] {
			delete(open, c.CallID)
			out = append(out, session.Record{Type: session.TypeResult, TurnID: c.TurnID, CallID: c.CallID, Name: c.Name,
				Status: string(tool.StatusUnknown),
				Output: "this call was still running in session " + from + " when kin forked it; its result is that session's, not this fork's: it may have happened"})
		}
	}
	return out
}
