package agent

import (
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/session"
)

// setMode records and applies a mode; an unchanged mode records nothing.
func (sess *Session) setMode(mode permission.Mode) error {
	// One change at a time, so the log's last mode record is the mode.
	sess.modeMu.Lock()
	defer sess.modeMu.Unlock()
	if sess.currentMode() == mode {
		return nil
	}
	if _, err := sess.append(session.Record{Type: session.TypeMode, Mode: string(mode)}); err != nil {
		return err
	}
	if err := sess.sync(); err != nil {
		return err
	}
	sess.mu.Lock()
	sess.mode = mode
	sess.mu.Unlock()
	return nil
}

// modeNote tells the model what the session's mode lets it do.
func modeNote(m permission.Mode) string {
	switch m {
	case permission.ModeAsk:
		return " The session is in ask mode: you can read and search but not change anything or run commands; only tools that change nothing are offered, and other calls are refused."
	case permission.ModeAutoEdit:
		return " The session is in auto-edit mode: file edits inside the workspace are applied without asking (the person sees them); commands, secrets and files that make things run later (.git, .kin, .vscode, .github/workflows, AGENTS.md and the like) still need approval."
	}
	return ""
}

// Why a call was denied, in the person's words: ToolCall.Reason of its
// final report, so that every front end says the same (the model is told
// in its own words, in the call's output).
const (
	// RefusedAskMode: the gate refused the call because of the session's
	// mode (permission.ReasonMode in ask mode).
	RefusedAskMode = "refused: the session is in ask mode, where kin only reads and searches; it changes nothing and runs no command (switch the mode to let it)"
	// RefusedCancelled: the turn ended while the person was asked.
	RefusedCancelled = "not run: the turn was cancelled before you decided"
	// RefusedByPerson: the person said no.
	RefusedByPerson = "denied by you; nothing was run or sent"
)
