package agent

import (
	"context"
	"errors"
	"time"

	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/worktree"
)

// WorktreeOptions ask session/new for a git worktree (package
// agent/worktree): Branch names its new branch ("": kin/<short id>).
type WorktreeOptions struct {
	Branch string
}

// worktreeTimeout bounds the git commands of one worktree request: a
// checkout of a large repository takes a while, a hung git must not hold
// session/new forever.
const worktreeTimeout = 5 * time.Minute

// createSession creates the session's log, and first its worktree when
// asked: checked before anything is made (not a repository, staged
// changes, a detached HEAD, a branch taken: a *worktree.Error), made under
// $KIN_HOME/worktrees/<id>, which becomes the first root; taken back when
// the log cannot be written.
func (s *Service) createSession(o SessionOptions, mode permission.Mode) (session.Info, *session.Log, []string, error) {
	if o.Worktree == nil {
		info, log, err := s.store.Create(o.Title, o.Roots, string(mode), o.Origin)
		return info, log, o.Roots, err
	}
	if len(o.Roots) == 0 {
		return session.Info{}, nil, nil, &worktree.Error{Kind: worktree.KindNotRepository, Message: "a worktree needs a workspace folder in a git repository, and none is open"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), worktreeTimeout)
	defer cancel()
	var roots []string
	info, log, err := s.store.CreatePrepared(o.Title, string(mode), o.Origin, func(id string) ([]string, func(), error) {
		plan, err := worktree.Check(ctx, o.Roots[0], o.Worktree.Branch, id)
		if err != nil {
			return nil, nil, err
		}
		wt, err := worktree.Create(ctx, s.opts.Home, id, plan)
		if err != nil {
			return nil, nil, err
		}
		roots = append([]string{wt.Path}, o.Roots[1:]...)
		return roots, func() { worktree.Discard(context.Background(), wt) }, nil
	})
	return info, log, roots, err
}

// Worktree is a session's worktree (ok false: it has none).
func (s *Service) Worktree(sessionID string) (worktree.Info, bool) {
	info, err := worktree.Load(s.opts.Home, sessionID)
	return info, err == nil
}

// worktreeOf opens the session (so an unknown id is ErrSessionNotFound)
// and reads its worktree.
func (s *Service) worktreeOf(sessionID string) (*Session, worktree.Info, error) {
	sess, _, err := s.open(sessionID, nil, session.Query{})
	if err != nil {
		return nil, worktree.Info{}, err
	}
	info, err := worktree.Load(s.opts.Home, sessionID)
	return sess, info, err
}

// WorktreeStatus is worktree/status.
func (s *Service) WorktreeStatus(ctx context.Context, sessionID string) (worktree.Status, error) {
	_, info, err := s.worktreeOf(sessionID)
	if err != nil {
		return worktree.Status{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, worktreeTimeout)
	defer cancel()
	return worktree.StatusOf(ctx, info)
}

// WorktreeApply is worktree/apply: not while a turn runs (its changes are
// half made) or an undo puts files back, in this session or another that
// shares its worktree (a fork).
func (s *Service) WorktreeApply(ctx context.Context, sessionID string) (worktree.Applied, error) {
	sess, info, err := s.worktreeOf(sessionID)
	if err != nil {
		return worktree.Applied{}, err
	}
	users, err := s.worktreeUsers(info)
	if err != nil {
		return worktree.Applied{}, err
	}
	release, ok := s.holdWorktree(sess, users)
	if !ok {
		return worktree.Applied{}, ErrTurnRunning
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, worktreeTimeout)
	defer cancel()
	return worktree.Apply(ctx, s.opts.Home, info)
}

// WorktreeRemove is worktree/remove: not while a turn runs in any session
// working in the worktree, and refused (worktree.KindShared, naming them)
// while other sessions still work there, unless forced. The session stays
// (its history is the person's); its folder is gone, so its tools have
// nothing left to work on, and the sessions it was taken from say so.
func (s *Service) WorktreeRemove(ctx context.Context, sessionID string, force bool) (worktree.Removed, error) {
	sess, info, err := s.worktreeOf(sessionID)
	if err != nil {
		return worktree.Removed{}, err
	}
	users, err := s.worktreeUsers(info)
	if err != nil {
		return worktree.Removed{}, err
	}
	release, ok := s.holdWorktree(sess, users)
	if !ok {
		return worktree.Removed{}, ErrTurnRunning
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, worktreeTimeout)
	defer cancel()
	return worktree.RemoveShared(ctx, s.opts.Home, info, force, users)
}

// worktreeUsers are the other sessions that still exist and work in
// info's worktree folder. The record of a session that no longer exists
// (deleted by a kin from before forks shared worktrees) is cleared on the
// way: it holds nobody's work.
func (s *Service) worktreeUsers(info worktree.Info) ([]worktree.Info, error) {
	all, err := worktree.Sharers(s.opts.Home, info)
	if err != nil {
		return nil, err
	}
	var out []worktree.Info
	for _, u := range all {
		if s.store.Exists(u.SessionID) {
			out = append(out, u)
		} else if err := worktree.Forget(s.opts.Home, u.SessionID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// holdWorktree holds sess and every session of users that this kin has
// open, so none starts a turn in the folder while it is applied or
// removed; false (nothing held) when one of them is busy.
func (s *Service) holdWorktree(sess *Session, users []worktree.Info) (func(), bool) {
	held := []*Session{}
	release := func() {
		for _, h := range held {
			h.unhold()
		}
	}
	all := []*Session{sess}
	s.mu.Lock()
	for _, u := range users {
		if o := s.sessions[u.SessionID]; o != nil {
			all = append(all, o)
		}
	}
	s.mu.Unlock()
	for _, h := range all {
		if !h.hold() {
			release()
			return nil, false
		}
		held = append(held, h)
	}
	return release, true
}

// shareWorktree records that fork works in the worktree of the session it
// was forked from (it has the same roots), when that session has one.
func (s *Service) shareWorktree(from, fork string) error {
	info, err := worktree.Load(s.opts.Home, from)
	if err != nil {
		if _, none := IsWorktreeError(err); none {
			return nil
		}
		return err
	}
	_, err = worktree.Share(s.opts.Home, info, fork)
	return err
}

// forgetWorktree is session/delete's part: the deleted session's record
// goes when other sessions still work in its worktree (the folder and
// branch are theirs now). The last session of a worktree keeps its record
// and folder as before: they may hold work not yet applied.
func (s *Service) forgetWorktree(sessionID string) error {
	info, err := worktree.Load(s.opts.Home, sessionID)
	if err != nil {
		return nil
	}
	users, err := s.worktreeUsers(info)
	if err != nil || len(users) == 0 {
		return err
	}
	return worktree.Forget(s.opts.Home, sessionID)
}

// IsWorktreeError reports whether err is a worktree refusal, and which.
func IsWorktreeError(err error) (*worktree.Error, bool) {
	var e *worktree.Error
	ok := errors.As(err, &e)
	return e, ok
}

// worktreeNotice warns, as a turn starts, that the session's worktree is
// gone (another session's forced worktree/remove took it, or it was
// deleted outside kin): the turn runs, but its tools have no folder left,
// and the person is told why rather than left to find out from failing
// tools.
func (s *Service) worktreeNotice(sess *Session) {
	if s.opts.Events == nil {
		return
	}
	info, err := worktree.Load(s.opts.Home, sess.id)
	if err != nil {
		return
	}
	if err := worktree.Gone(info); err != nil {
		s.opts.Events.Notice(Notice{Level: "warning", Source: "worktree", SessionID: sess.id, Message: err.Error()})
	}
}
