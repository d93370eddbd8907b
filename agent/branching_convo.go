package agent

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/session"
)

// turnSeen notes a turn whose question the conversation now holds.
func (c *convo) turnSeen(id string) {
	if id != "" && (len(c.turns) == 0 || c.turns[len(c.turns)-1] != id) {
		c.turns = append(c.turns, id)
	}
}

// keptTurns is turns after a compaction: only those whose question is still
// in the items (the summary stands for the others, which no rollback can
// take out of it).
func (c *convo) keptTurns() {
	kept := c.turns[:0]
	for _, t := range c.turns {
		if slices.ContainsFunc(c.items, func(it convItem) bool { return it.turn == t && it.kind == model.Message && it.role == "user" }) {
			kept = append(kept, t)
		}
	}
	c.turns = kept
}

// forked notes that the turns so far were copied from another session.
func (c *convo) forked(f *session.ForkRef) {
	if f == nil {
		return
	}
	c.copied = map[string]bool{}
	for _, t := range c.turns {
		c.copied[t] = true
	}
	c.forkedFrom = f.SessionID
}

// copiedFrom says, for a turn a fork copied, the session it came from.
func (c *convo) copiedFrom(turn string) string {
	if c.copied[turn] {
		return c.forkedFrom
	}
	return ""
}

// steerItem is the person's words that joined a running turn: a user
// message of that turn, where it joined.
func steerItem(r session.Record, off int64, n int) convItem {
	it := convItem{kind: model.Message, role: "user", turn: r.TurnID, text: steerNote(r.Text)}
	if len(r.Parts) > 0 {
		it.partBytes = partsSize(r.Parts)
		it.off, it.n = off, n
		if n == 0 {
			it.parts = r.Parts
		}
	}
	return it
}

// steerNote frames steered text so the model knows it came mid-turn and
// is the person's (not a tool's output).
func steerNote(text string) string {
	if text == "" {
		return text
	}
	return "[kin: the person added this while you were working on the turn]\n" + text
}

// rollback takes the rolled-back turns' items out of what the model sees
// and, when files could not be put back, tells the model which (it would
// otherwise take the files for what they were before those turns). A
// rollback's first record (started) takes them out before any file goes
// back; until its outcome comes the model is told the files may be only
// partly put back, which stays true of a rollback kin was stopped in.
func (c *convo) rollback(rb *session.Rollback, started bool) {
	if rb == nil {
		return
	}
	switch {
	case started:
		c.started = rb.Turns
		rb = session.Unfinished(rb.Turns)
		c.startNote = rollbackNote(rb)
		if c.unrolled == nil {
			c.unrolled = map[string]bool{}
		}
		for _, t := range rb.Turns {
			c.unrolled[t] = true
		}
	case c.started != nil && slices.Equal(c.started, rb.Turns):
		// The outcome's note, if any, replaces the one of its first record
		// (the last such note: nothing joins the conversation between the two).
		for i := len(c.items) - 1; i >= 0; i-- {
			if it := c.items[i]; it.kind == model.Message && it.role == "user" && it.turn == "" && it.text == c.startNote {
				c.items = slices.Delete(c.items, i, i+1)
				break
			}
		}
		for _, t := range c.started {
			delete(c.unrolled, t)
		}
		c.started, c.startNote = nil, ""
	}
	if !started {
		// An undo of a turn kin was stopped in is finished by the
		// rollback, which put back the rest (or says which files it
		// could not): its note would tell the model so for good.
		for _, t := range rb.Turns {
			if c.undoing[t] {
				delete(c.undoing, t)
				note := undoStartedNote(&session.Undo{TurnID: t})
				c.items = slices.DeleteFunc(c.items, func(it convItem) bool {
					return it.kind == model.Message && it.role == "user" && it.turn == "" && it.text == note
				})
			}
		}
	}
	if c.rolled == nil {
		c.rolled = map[string]bool{}
	}
	for _, t := range rb.Turns {
		c.rolled[t] = true
	}
	gone := func(turn string) bool { return turn != "" && slices.Contains(rb.Turns, turn) }
	c.items = slices.DeleteFunc(c.items, func(it convItem) bool { return gone(it.turn) })
	c.turns = slices.DeleteFunc(c.turns, gone)
	c.unknown = slices.DeleteFunc(c.unknown, func(u session.Unknown) bool { return gone(u.TurnID) })
	c.skillLoads = slices.DeleteFunc(c.skillLoads, func(l skillLoad) bool { return gone(l.turn) })
	if note := rollbackNote(rb); note != "" {
		c.items = append(c.items, convItem{kind: model.Message, role: "user", text: note})
	}
	c.asked, c.answered1 = false, false
	c.textBytes, c.outBytes = 0, 0
	for _, it := range c.items {
		t, o := itemSize(it)
		c.textBytes += t
		c.outBytes += o
	}
	c.ctxTokens, c.ctxBytes = 0, 0
}

// rollbackNote is what the model is told of a rollback: nothing when every
// file went back as it was; else which files are not as they were before
// the rolled-back turns.
func rollbackNote(rb *session.Rollback) string {
	var left []string
	cmds, unfinished, failed := false, false, false
	for _, e := range rb.Errors {
		if e.Error == session.RollbackUnfinished {
			unfinished = true
		} else {
			failed = true
		}
	}
	for _, u := range rb.Undos {
		for _, cf := range u.Conflicts {
			left = append(left, cf.Path)
		}
		cmds = cmds || len(u.NotUndoable) > 0
	}
	if len(left) == 0 && !cmds && len(rb.Errors) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[kin: the person took back the last %d turn(s) of this conversation", len(rb.Turns))
	if len(left) > 0 {
		fmt.Fprintf(&b, "; these files were changed since and are left as they are: %s", strings.Join(left, ", "))
	}
	if cmds {
		b.WriteString("; what those turns' commands changed was not undone")
	}
	if failed {
		b.WriteString("; some of their file changes could not be undone")
	}
	if unfinished {
		b.WriteString("; kin stopped while it put their files back, so some files may still be as those turns left them")
	}
	b.WriteString(". Read files again before relying on their content.]")
	return b.String()
}

// lastTurns are the newest n turns the model still sees, newest first, or
// how many there are when fewer.
func (c *convo) lastTurns(n int) ([]string, int) {
	if n > len(c.turns) {
		return nil, len(c.turns)
	}
	out := slices.Clone(c.turns[len(c.turns)-n:])
	slices.Reverse(out)
	return out, len(c.turns)
}
