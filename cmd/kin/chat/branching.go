package chat

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/kin-dev/kin/rpc"
)

// Branching at the prompt: words for the running turn (">words" or
// /steer words), /fork [TURN] and /rollback [N] (PROTOCOL.md, Branching).

// steerPrefix marks a line typed while a turn runs as words for that turn
// (without it the line is queued as the next question).
const steerPrefix = ">"

// steer sends words to the running turn: they join at its next model
// request (turn/steered shows them where they joined).
func (u *ui) steer(text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		u.usage("/steer WORDS (or >WORDS) while a turn runs")
		return
	}
	if !u.running || u.turnID == "" {
		u.scr.line(u.scr.dim("No turn is running: ask it as a question instead."))
		return
	}
	var res rpc.TurnSteerResult
	if err := u.call(rpc.MethodTurnSteer, rpc.TurnSteerParams{SessionID: u.session, TurnID: u.turnID, Input: text}, &res); err != nil {
		u.fail(err)
		return
	}
	u.scr.line(u.scr.dim("(added: the model reads it at its next step)"))
}

// steered shows the person's words where they joined the turn.
func (u *ui) steered(params []byte) {
	var st rpc.TurnSteered
	if json.Unmarshal(params, &st) != nil || st.SessionID != u.session {
		return
	}
	u.scr.endLine()
	u.scr.line(u.scr.bold("You (added)> ") + clean(st.Input))
}

// fork makes a new session from this one (up to TURN, or every ended
// turn) and continues there; the original stays as it was.
func (u *ui) fork(turn string) {
	if u.session == "" {
		u.scr.line(u.scr.dim("No session to fork yet."))
		return
	}
	if u.busy() {
		return
	}
	var res rpc.SessionForkResult
	if err := u.call(rpc.MethodSessionFork, rpc.SessionForkParams{SessionID: u.session, TurnID: turn}, &res); err != nil {
		u.fail(err)
		return
	}
	from := u.session
	u.session, u.mode = res.Session.SessionID, res.Session.Mode
	u.model, u.effort, u.window = res.Model, res.Effort, nil
	u.loadCommands()
	u.scr.line(u.scr.dim(fmt.Sprintf("Forked %s into %s (%d turn(s)); your next question continues the fork. /resume %s goes back.",
		cleanLine(from), cleanLine(u.session), res.Session.Turns, cleanLine(from))))
}

// rollback takes the last N turns out of the conversation and undoes
// their file changes, saying what could not be undone.
func (u *ui) rollback(arg string) {
	n := 1
	if arg != "" {
		v, err := strconv.Atoi(arg)
		if err != nil || v < 1 {
			u.usage("/rollback [N] (N turns, 1 or more)")
			return
		}
		n = v
	}
	if u.session == "" {
		u.scr.line(u.scr.dim("No session yet."))
		return
	}
	if u.busy() {
		return
	}
	var res rpc.TurnRollbackResult
	if err := u.call(rpc.MethodTurnRollback, rpc.TurnRollbackParams{SessionID: u.session, Turns: n}, &res); err != nil {
		u.fail(err)
		return
	}
	u.showRollback(res)
}

func (u *ui) showRollback(r rpc.TurnRollbackResult) {
	s := u.scr
	ids := make([]string, len(r.Turns))
	for i, t := range r.Turns {
		ids[i] = cleanLine(t)
	}
	s.line(s.cyan("[rollback]") + fmt.Sprintf(" %d turn(s) taken back: %s (the model no longer sees them)", len(r.Turns), strings.Join(ids, ", ")))
	for _, un := range r.Undos {
		u.showUndo(un)
	}
	for _, e := range r.Errors {
		s.line("  " + s.yellow("not undone") + " turn " + cleanLine(e.TurnID) + ": " + cleanLine(e.Error))
	}
}

// branchingItem redraws history's steer, rollback and fork items; it
// reports whether h was one.
func (u *ui) branchingItem(h historyItem) bool {
	s := u.scr
	switch h.Type {
	case rpc.HistorySteer:
		s.line(s.bold("You (added)> ") + clean(h.Text))
	case rpc.HistoryRollback:
		if h.Rollback != nil {
			u.showRollback(*h.Rollback)
		}
	case rpc.HistoryFork:
		if h.Fork != nil {
			s.line(s.dim("── forked from " + cleanLine(h.Fork.SessionID) + " ──"))
		}
	default:
		if h.RolledBack && (h.Type == "user" || h.Type == "assistant") {
			// Shown, marked: the model no longer sees it.
			s.line(s.dim("(taken back) " + h.Type + "> " + cleanLine(h.Text)))
			return true
		}
		return false
	}
	return true
}
