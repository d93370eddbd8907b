package agent

import (
	"fmt"

	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/session"
)

// SessionConfig is what session/configure changes; empty fields are left
// as they are.
type SessionConfig struct {
	Mode permission.Mode
}

// Configured is a session's configuration after a change.
type Configured struct {
	SessionID string
	Mode      permission.Mode
}

// Configure changes a session's settings. A new mode is recorded (so it
// survives resume) and takes effect from the next decision, also in a turn
// that is running: the gate reads it for every call.
func (s *Service) Configure(sessionID string, c SessionConfig, defaultRoots []string) (Configured, error) {
	sess, _, err := s.open(sessionID, defaultRoots, session.Query{})
	if err != nil {
		return Configured{}, err
	}
	if err := sess.readOnly(); err != nil {
		return Configured{}, err
	}
	if c.Mode != "" {
		mode, err := permission.ParseMode(string(c.Mode))
		if err != nil {
			return Configured{}, fmt.Errorf("%w: %v", ErrBadParams, err)
		}
		if err := sess.setMode(mode); err != nil {
			return Configured{}, err
		}
	}
	return Configured{SessionID: sessionID, Mode: sess.currentMode()}, nil
}

// setMode records and applies a mode; an unchanged mode records nothing.
func (sess *Session) setMode(mode permission.Mode) error {
	// One change at a time, so the log's last mode record is the mode.
	sess.modeMu.Lock()
	defer sess.modeMu.Unlock()
	if sess.currentMode() == mode {
		return nil
	}
	if _, err := sess.append(session.Record{Type: session.TypeMode, Mode: modeRecorded(mode)}); err != nil {
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

// modeRecorded is how a mode is written: the default as itself, so a log
// says what the person chose.
func modeRecorded(m permission.Mode) string { return string(m) }

// modeNote tells the model what the session's mode lets it do.
func modeNote(m permission.Mode) string {
	switch m {
	case permission.ModeAsk:
		return " The session is in ask mode: you can read and search but not change anything or run commands; only tools that change nothing are offered, and other calls are refused."
	case permission.ModeAutoEdit:
		return " The session is in auto-edit mode: file edits inside the workspace are applied without asking (the person sees them); commands and sensitive paths still need approval."
	}
	return ""
}
