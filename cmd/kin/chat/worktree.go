package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/rpc"
)

// Worktrees (rpc/PROTOCOL.md, Worktrees): `kin chat --worktree` makes its
// sessions in a git worktree of their own; /worktree status|apply|remove
// [force] looks at it and brings its changes back.

const worktreeUsage = "/worktree status | apply | remove [force]"

// worktreeParam is what session/new asks for: the option's worktree, a
// named branch only for the first session (a second would find it taken).
func (u *ui) worktreeParam() *rpc.WorktreeParam {
	w := u.o.Worktree
	if w == nil {
		return nil
	}
	if w.Branch != "" && u.worktreeUsed {
		return nil
	}
	u.worktreeUsed = true
	return &rpc.WorktreeParam{Want: w}
}

func (u *ui) showWorktree(wt *rpc.WorktreeInfo) {
	if wt == nil {
		return
	}
	u.scr.line(u.scr.dim(fmt.Sprintf("Worktree %s on branch %s (from %s at %s); /worktree apply brings its changes to %s",
		cleanLine(wt.Path), cleanLine(wt.Branch), cleanLine(wt.BaseBranch), short(wt.Base), cleanLine(wt.Repo))))
}

func short(sha string) string {
	if len(sha) > 10 {
		return sha[:10]
	}
	return cleanLine(sha)
}

func (u *ui) worktreeCommand(fields []string) {
	if u.session == "" {
		u.usage("no session yet: ask something first")
		return
	}
	switch {
	case len(fields) == 1 || len(fields) == 2 && fields[1] == "status":
		u.worktreeStatus()
	case len(fields) == 2 && fields[1] == "apply":
		u.worktreeApply()
	case len(fields) == 2 && fields[1] == "remove", len(fields) == 3 && fields[1] == "remove" && fields[2] == "force":
		u.worktreeRemove(len(fields) == 3)
	default:
		u.usage(worktreeUsage)
	}
}

func (u *ui) worktreeStatus() {
	var st rpc.WorktreeStatusResult
	if err := u.call(rpc.MethodWorktreeStatus, sessionIDParams{SessionID: u.session}, &st); err != nil {
		u.worktreeFail(err)
		return
	}
	s := u.scr
	s.line(fmt.Sprintf("%s  %s", cleanLine(st.Branch), s.dim(cleanLine(st.Path))))
	state := []string{fmt.Sprintf("%d ahead", st.Ahead), fmt.Sprintf("%d behind %s", st.Behind, cleanLine(st.BaseBranch))}
	if st.Uncommitted {
		state = append(state, "uncommitted changes")
	}
	if st.Unapplied {
		state = append(state, s.yellow("not applied"))
	} else if len(st.Files) > 0 {
		state = append(state, "applied")
	}
	s.line("  " + strings.Join(state, ", "))
	if len(st.Files) == 0 {
		s.line(s.dim("  no changes since " + short(st.Base)))
	}
	for _, f := range st.Files {
		s.line(fmt.Sprintf("  %-11s %s", cleanLine(f.Status), cleanLine(f.Path)))
	}
}

func (u *ui) worktreeApply() {
	if u.busy() {
		return
	}
	var res rpc.WorktreeApplyResult
	if err := u.call(rpc.MethodWorktreeApply, sessionIDParams{SessionID: u.session}, &res); err != nil {
		u.worktreeFail(err)
		return
	}
	s := u.scr
	if len(res.Files) == 0 {
		s.line(s.dim("The worktree has no changes to apply."))
		return
	}
	s.line(fmt.Sprintf("Applied %d file(s) to the checkout as uncommitted changes:", len(res.Files)))
	for _, f := range res.Files {
		s.line(fmt.Sprintf("  %-11s %s", cleanLine(f.Status), cleanLine(f.Path)))
	}
	for _, p := range res.RunsLater {
		s.line(s.yellow("[check]") + " " + cleanLine(p) + " makes something run later (a hook, a workflow, kin's config): look at it before you commit")
	}
}

func (u *ui) worktreeRemove(force bool) {
	if u.busy() {
		return
	}
	var res rpc.WorktreeRemoveResult
	if err := u.call(rpc.MethodWorktreeRemove, rpc.WorktreeRemoveParams{SessionID: u.session, Force: force}, &res); err != nil {
		u.worktreeFail(err)
		return
	}
	msg := "Removed the worktree and its branch " + cleanLine(res.Branch)
	if res.Commit != "" {
		msg += fmt.Sprintf(" (it was at %s: git branch %s %s brings it back)", short(res.Commit), cleanLine(res.Branch), cleanLine(res.Commit))
	}
	u.scr.line(msg + ".")
}

// worktreeFail reports a refusal with its paths and what to do next.
func (u *ui) worktreeFail(err error) {
	u.fail(err)
	var re *jsonrpc2.Error
	if !errors.As(err, &re) || re.Code != rpc.CodeWorktree || re.Data == nil {
		return
	}
	var d rpc.WorktreeErrorData
	if json.Unmarshal(*re.Data, &d) != nil {
		return
	}
	for _, p := range d.Paths {
		u.errorf("  %s", cleanLine(p))
	}
	switch d.Kind {
	case "conflict":
		u.errorf("nothing was changed: commit, stash or undo those paths in the checkout, then /worktree apply again")
	case "unapplied":
		u.errorf("/worktree apply brings them to the checkout; /worktree remove force drops them")
	case "shared":
		u.errorf("/worktree remove force removes it anyway (those sessions keep their history, not the folder)")
	}
}
