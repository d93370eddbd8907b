package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
)

// PROTOCOL.md, Worktrees: session/new's worktree, worktree/status,
// worktree/apply, worktree/remove.

const (
	MethodWorktreeStatus = "worktree/status"
	MethodWorktreeApply  = "worktree/apply"
	MethodWorktreeRemove = "worktree/remove"
)

// CodeWorktree is a worktree request refused (PROTOCOL.md, Errors); the
// error's data is a WorktreeErrorData.
const CodeWorktree = -32020

// WorktreeErrorData is the data of a -32020 error.
type WorktreeErrorData struct {
	// Kind is notRepository, noCommits, detachedHead, dirtyIndex,
	// badBranch, branchExists, exists, noWorktree, missing, conflict,
	// unapplied or shared.
	Kind string `json:"kind"`
	// Paths are the conflicting paths (conflict) or the unapplied changes
	// (unapplied).
	Paths []string `json:"paths,omitempty"`
	// Sessions are the other sessions that work in the worktree (shared).
	Sessions []string `json:"sessions,omitempty"`
}

// WorktreeRequest is session/new's worktree: true, or {branch?}. false
// and null ask for none.
type WorktreeRequest struct {
	// Branch names the new branch (absent: kin/<short session id>).
	Branch string `json:"branch,omitempty"`
}

// WorktreeParam is session/new's worktree field: true | false | {branch?}.
type WorktreeParam struct {
	Want *WorktreeRequest
}

// UnmarshalJSON takes true, false, null or an object.
func (w *WorktreeParam) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch string(b) {
	case "true":
		w.Want = &WorktreeRequest{}
		return nil
	case "false", "null":
		w.Want = nil
		return nil
	}
	if len(b) == 0 || b[0] != '{' {
		return errors.New("worktree is true, false or {\"branch\": name}")
	}
	var r WorktreeRequest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return errors.New("worktree: " + err.Error())
	}
	w.Want = &r
	return nil
}

// MarshalJSON writes true, or the object when it names a branch.
func (w WorktreeParam) MarshalJSON() ([]byte, error) {
	switch {
	case w.Want == nil:
		return []byte("false"), nil
	case w.Want.Branch == "":
		return []byte("true"), nil
	}
	return json.Marshal(w.Want)
}

// WorktreeInfo is a session's worktree, in its session object.
type WorktreeInfo struct {
	// Path is the worktree ($KIN_HOME/worktrees/<sessionId>), the
	// session's cwd; Repo the original checkout.
	Path string `json:"path"`
	Repo string `json:"repo"`
	// Branch is the worktree's branch, made from Base (a commit) on
	// BaseBranch, the original checkout's branch then.
	Branch     string `json:"branch"`
	Base       string `json:"base"`
	BaseBranch string `json:"baseBranch"`
}

// WorktreeFile is one changed path.
type WorktreeFile struct {
	Path string `json:"path"`
	// Status is added, modified, deleted or typeChanged.
	Status string `json:"status"`
}

// WorktreeStatusResult is worktree/status's result.
type WorktreeStatusResult struct {
	WorktreeInfo
	// Files are the changes since the base, committed or not.
	Files []WorktreeFile `json:"files"`
	// Ahead: the worktree branch's commits since the base; Behind: the
	// base branch's in the original checkout.
	Ahead  int `json:"ahead"`
	Behind int `json:"behind"`
	// Uncommitted: changes not committed in the worktree. Unapplied:
	// changes the original checkout was not given in this state.
	Uncommitted bool `json:"uncommitted"`
	Unapplied   bool `json:"unapplied"`
}

// WorktreeApplyResult is worktree/apply's result.
type WorktreeApplyResult struct {
	// Files are the paths now changed in the original checkout
	// (uncommitted); empty when the worktree had no changes.
	Files []WorktreeFile `json:"files"`
	// RunsLater are those of them that make something run later (.kin/,
	// .github/workflows, .envrc...): worth a look before committing.
	RunsLater []string `json:"runsLater,omitempty"`
}

// WorktreeRemoveParams is worktree/remove's params.
type WorktreeRemoveParams struct {
	SessionID string `json:"sessionId"`
	// Force removes it even with changes not applied.
	Force bool `json:"force,omitempty"`
}

// WorktreeRemoveResult is worktree/remove's result.
type WorktreeRemoveResult struct {
	// Branch was deleted; Commit is where it pointed (absent when the
	// branch was already gone).
	Branch string `json:"branch"`
	Commit string `json:"commit,omitempty"`
}
