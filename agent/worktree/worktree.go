// Package worktree gives a session a git worktree of its own: a new branch
// checked out outside the repository, under $KIN_HOME/worktrees/<session>,
// which becomes the session's root (tools, sandbox, instructions, undo all
// work there), and the way back: its changes applied to the original
// checkout as uncommitted changes, all or nothing.
//
// Every git command runs through agent/gitx, so a repository's hooks
// (post-checkout on `worktree add`), filters, fsmonitor and pager never
// run. What a worktree is for the trust boundary (its folder a workspace
// root, not one of kin's secrets; its git folder in the repository
// protected like any .git) is agent/boundary's rule (KinWorktree).
//
// The state of each worktree is a small file beside it,
// $KIN_HOME/worktrees/<session>.json, which commands cannot see (kin's home
// is hidden from them; only the worktree folder inside it is writable).
package worktree

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kin-dev/kin/agent/gitx"
	"github.com/kin-dev/kin/agent/lockedfile"
)

// Kinds of Error, as the protocol names them.
const (
	KindNotRepository = "notRepository"
	KindNoCommits     = "noCommits"
	KindDetachedHead  = "detachedHead"
	KindDirtyIndex    = "dirtyIndex"
	KindBadBranch     = "badBranch"
	KindBranchExists  = "branchExists"
	KindExists        = "exists"
	KindNone          = "noWorktree"
	KindConflict      = "conflict"
	KindUnapplied     = "unapplied"
	KindMissing       = "missing"
	KindShared        = "shared"
)

// Error is a worktree operation refused, with what a person needs to act:
// its kind and, for conflicts and unapplied changes, the paths; for a
// worktree other sessions still work in, those sessions.
type Error struct {
	Kind     string
	Message  string
	Paths    []string
	Sessions []string
}

func (e *Error) Error() string { return e.Message }

func refuse(kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Info is one session's worktree, as kept beside it.
type Info struct {
	SessionID string `json:"sessionId"`
	// Repo is the original checkout's top folder; Path the worktree.
	Repo string `json:"repo"`
	Path string `json:"path"`
	// Branch is the worktree's new branch, Base the commit it started at,
	// BaseBranch the branch the original checkout was on then.
	Branch     string `json:"branch"`
	Base       string `json:"base"`
	BaseBranch string `json:"baseBranch"`
	// Applied is the tree (the worktree's whole content, committed or
	// not) last brought into the original checkout; "" when never.
	Applied string    `json:"applied,omitempty"`
	Created time.Time `json:"created"`
	// Owner is the session the worktree was made for (its folder is named
	// by it) when this record is another session's that shares it: a fork
	// of a worktree session works in the same folder. "" for the session
	// that made it (and in every record written before forks shared).
	Owner string `json:"owner,omitempty"`
	// RemovedBy is the session whose forced worktree/remove took the
	// folder away while this session still used it: what this session
	// says from then on, instead of a folder silently missing.
	RemovedBy string `json:"removedBy,omitempty"`
}

// OwnerID is the session the worktree was made for.
func (i Info) OwnerID() string {
	if i.Owner != "" {
		return i.Owner
	}
	return i.SessionID
}

// Dir is where kin keeps worktrees: $KIN_HOME/worktrees.
func Dir(kinHome string) string { return filepath.Join(kinHome, "worktrees") }

// PathFor is the worktree folder of a session.
func PathFor(kinHome, sessionID string) string { return filepath.Join(Dir(kinHome), sessionID) }

func statePath(kinHome, sessionID string) string {
	return filepath.Join(Dir(kinHome), sessionID+".json")
}

// ShortID is the part of a session id a branch is named by: its random
// suffix (s_20260102T150405_a1b2c3 → a1b2c3).
func ShortID(sessionID string) string {
	if i := strings.LastIndexByte(sessionID, '_'); i >= 0 && i+1 < len(sessionID) {
		return sessionID[i+1:]
	}
	return strings.TrimPrefix(sessionID, "s_")
}

// Plan is a worktree checked and ready to be made: Check says what would
// be created, or why not, before anything is.
type Plan struct {
	Repo, Branch, Base, BaseBranch string
}

// Check looks at dir's repository: a work tree with a commit, on a
// branch, nothing staged; branch ("" for kin/<short id>) a valid name not
// taken. It changes nothing.
func Check(ctx context.Context, dir, branch, sessionID string) (Plan, error) {
	if !gitx.InTree(ctx, dir) {
		return Plan{}, refuse(KindNotRepository, "%s is not in a git repository (a worktree needs one)", dir)
	}
	top, err := gitx.Toplevel(ctx, dir)
	if err != nil {
		return Plan{}, refuse(KindNotRepository, "%s: %v", dir, err)
	}
	// a folder whose .git names another checkout's git folder would make
	// the worktree a branch of that repository, its objects and refs
	// writable to the session's commands
	if err := gitx.Owned(ctx, top); err != nil {
		return Plan{}, refuse(KindNotRepository, "%v: kin makes a worktree only of a repository whose work tree this folder is", err)
	}
	base, err := gitx.Output(ctx, top, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	if err != nil {
		return Plan{}, refuse(KindNoCommits, "the repository at %s has no commit yet: a worktree starts from one", top)
	}
	head, err := gitx.Output(ctx, top, "symbolic-ref", "-q", "HEAD")
	if err != nil {
		return Plan{}, refuse(KindDetachedHead, "the repository at %s has a detached HEAD: check out a branch first, so the worktree's changes have somewhere to go back to", top)
	}
	if _, err := gitx.Output(ctx, top, "diff", "--cached", "--quiet"); err != nil {
		if gitx.ExitCode(err) == 1 {
			return Plan{}, refuse(KindDirtyIndex, "the repository at %s has staged changes: commit or unstage them first (a worktree starts from the last commit, so they would be left behind)", top)
		}
		return Plan{}, err
	}
	if branch == "" {
		branch = "kin/" + ShortID(sessionID)
	}
	// --branch prints the name a branch would get, expanding "@{-1}" to the
	// branch checked out before: a name that is not itself is refused, or
	// the branch made and the one recorded (and later removed) would differ
	if out, err := gitx.Output(ctx, top, "check-ref-format", "--branch", branch); err != nil || strings.HasPrefix(branch, "-") || strings.TrimSpace(out) != branch {
		return Plan{}, refuse(KindBadBranch, "%q is not a valid branch name", branch)
	}
	if _, err := gitx.Output(ctx, top, "rev-parse", "--verify", "-q", "refs/heads/"+branch); err == nil {
		return Plan{}, refuse(KindBranchExists, "the branch %s already exists in %s: name another", branch, top)
	}
	return Plan{Repo: top, Branch: branch, Base: strings.TrimSpace(base),
		BaseBranch: strings.TrimPrefix(strings.TrimSpace(head), "refs/heads/")}, nil
}

// Create makes the planned worktree for sessionID under kinHome. On
// failure nothing is left behind.
func Create(ctx context.Context, kinHome, sessionID string, p Plan) (Info, error) {
	if err := os.MkdirAll(Dir(kinHome), 0o700); err != nil {
		return Info{}, err
	}
	path := PathFor(kinHome, sessionID)
	if _, err := os.Lstat(path); err == nil {
		return Info{}, refuse(KindExists, "%s already exists", path)
	}
	if _, err := gitx.Output(ctx, p.Repo, "rev-parse", "--verify", "-q", "refs/heads/"+p.Branch); err == nil {
		return Info{}, refuse(KindBranchExists, "the branch %s already exists in %s: name another", p.Branch, p.Repo)
	}
	if _, err := gitx.Output(ctx, p.Repo, "worktree", "add", "-q", "-b", p.Branch, path, p.Base); err != nil {
		// worktree add makes the branch before it checks out: take back
		// what it left (the branch did not exist a moment ago; one made
		// meanwhile by someone else would name another commit or fail
		// worktree add before it made anything)
		_, _ = gitx.Output(ctx, p.Repo, "worktree", "remove", "--force", path)
		_ = os.RemoveAll(path)
		_, _ = gitx.Output(ctx, p.Repo, "worktree", "prune")
		if out, e := gitx.Output(ctx, p.Repo, "rev-parse", "--verify", "-q", "refs/heads/"+p.Branch); e == nil && strings.TrimSpace(out) == p.Base && !strings.Contains(err.Error(), "already exists") {
			_, _ = gitx.Output(ctx, p.Repo, "branch", "-D", p.Branch)
		}
		return Info{}, fmt.Errorf("making the worktree: %w", err)
	}
	info := Info{SessionID: sessionID, Repo: p.Repo, Path: path, Branch: p.Branch, Base: p.Base,
		BaseBranch: p.BaseBranch, Created: time.Now().UTC()}
	if err := update(kinHome, sessionID, func(rec *Info, _ bool) (bool, error) {
		*rec = info
		return true, nil
	}); err != nil {
		Discard(ctx, info)
		return Info{}, err
	}
	return info, nil
}

// Discard takes back a worktree just made (the session it was for could
// not be created): folder, registration and branch.
func Discard(ctx context.Context, info Info) {
	_, _ = gitx.Output(ctx, info.Repo, "worktree", "remove", "--force", info.Path)
	_ = os.RemoveAll(info.Path)
	_, _ = gitx.Output(ctx, info.Repo, "worktree", "prune")
	_, _ = gitx.Output(ctx, info.Repo, "branch", "-D", info.Branch)
	_ = forget(filepath.Dir(filepath.Dir(info.Path)), info.SessionID)
}

// Load reads a session's worktree; a *Error of KindNone when it has none.
func Load(kinHome, sessionID string) (Info, error) {
	b, err := os.ReadFile(statePath(kinHome, sessionID))
	if errors.Is(err, os.ErrNotExist) {
		return Info{}, refuse(KindNone, "session %s has no worktree", sessionID)
	}
	if err != nil {
		return Info{}, err
	}
	var info Info
	if err := json.Unmarshal(b, &info); err != nil {
		return Info{}, fmt.Errorf("reading the worktree of session %s: %v", sessionID, err)
	}
	if info.SessionID != sessionID || info.Path != PathFor(kinHome, info.OwnerID()) {
		return Info{}, fmt.Errorf("the worktree record of session %s names another session or folder", sessionID)
	}
	return info, nil
}

// Share records that sessionID (a fork of info's session) works in info's
// worktree too: the same folder, branch and base, and what was last
// applied, so status and apply answer alike from either session.
func Share(kinHome string, info Info, sessionID string) (Info, error) {
	shared := info
	shared.Owner, shared.SessionID = info.OwnerID(), sessionID
	shared.Created = time.Now().UTC()
	if err := update(kinHome, sessionID, func(rec *Info, _ bool) (bool, error) {
		*rec = shared
		return true, nil
	}); err != nil {
		return Info{}, err
	}
	return shared, nil
}

// Sharers are the records of the other sessions that work in info's
// worktree folder (forks, or the session it was made for), by session id.
// A record that cannot be read is not counted: Load refuses it too.
func Sharers(kinHome string, info Info) ([]Info, error) {
	names, err := filepath.Glob(filepath.Join(Dir(kinHome), "*.json"))
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, n := range names {
		id := strings.TrimSuffix(filepath.Base(n), ".json")
		if id == info.SessionID {
			continue
		}
		if other, err := Load(kinHome, id); err == nil && other.Path == info.Path {
			out = append(out, other)
		}
	}
	return out, nil
}

// Forget removes sessionID's record only (its session is deleted, or the
// worktree was taken away from it): the folder and branch stay.
func Forget(kinHome, sessionID string) error { return forget(kinHome, sessionID) }

// update is one locked read-modify-write of a session's worktree record:
// fn gets the record as it is on disk now (exists false when there is
// none) and says whether to write it. The record is shared: two kins may
// serve one session (an editor's and kin chat), and each may apply its
// worktree; so the write is lockedfile's (a private temporary file renamed
// over the record, durably, under the record's lock), not a ".tmp" name
// two writers could interleave on, and what is written is the record on
// disk changed, not a copy read before the work began.
func update(kinHome, sessionID string, fn func(info *Info, exists bool) (bool, error)) error {
	p := statePath(kinHome, sessionID)
	return lockedfile.Update(p, func(data []byte, exists bool) ([]byte, error) {
		var info Info
		if exists {
			if err := json.Unmarshal(data, &info); err != nil {
				return nil, fmt.Errorf("reading the worktree of session %s: %v", sessionID, err)
			}
		}
		write, err := fn(&info, exists)
		if err != nil || !write {
			return nil, err
		}
		b, err := json.MarshalIndent(info, "", "  ")
		if err != nil {
			return nil, err
		}
		return append(b, '\n'), nil
	})
}

// forget removes a session's worktree record and its lock file (which
// lockedfile keeps otherwise: one per session would pile up in
// $KIN_HOME/worktrees). A writer that still waits on the old lock finds no
// record and writes none (see Apply).
func forget(kinHome, sessionID string) error {
	p := statePath(kinHome, sessionID)
	err := os.Remove(p)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	_ = os.Remove(p + ".lock")
	return nil
}
