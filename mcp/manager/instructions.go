package manager

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/catalog"
	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/connect"
)

// A server's instructions (the "instructions" of its initialize result)
// are its own text about how to use it. They are shown to the person
// (List), and sent to the model framed as that server's untrusted text
// (Instructions; package agent frames and caps them through
// agent/boundary). They are pinned with the launch identity: the first
// connection after the person trusted a launch pins their hash in the
// trust grant; a later connection whose text differs is a warning notice,
// and its text is withheld from the model until the person accepts it
// (AcceptInstructions, naming the hash they were shown). A server allowed
// once, or passed by an ACP client, has nothing to pin to: its
// instructions of this connection are sent (framed) as its tools are.

// MaxInstructions is the most of a server's instructions kin keeps (and
// shows); what the model gets is capped again, smaller, by package agent.
const MaxInstructions = 64 << 10

// InstructionsHash is the hash the person accepts: of the text as shown.
func InstructionsHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// instructions are a connection's instructions and where they stand.
type instructions struct {
	text    string // redacted, capped at MaxInstructions
	hash    string // InstructionsHash(text); "" when the server gave none
	pending bool   // changed since the person accepted them: withheld
}

// ErrInstructionsChanged is AcceptInstructions' answer when the hash named
// is not the server's current instructions'.
var ErrInstructionsChanged = errors.New("the server's instructions are not the ones named (they changed again, or none are waiting): look at them again")

// takeInstructions reads a new connection's instructions and decides
// whether the model may have them. Call without locks, before the server
// counts as connected.
func (s *server) takeInstructions(conn *connect.Conn) {
	var text string
	if r := conn.Session.InitializeResult(); r != nil {
		text = r.Instructions
	}
	in := instructions{}
	// What the person cannot see is removed before the text is shown,
	// hashed (the hash they accept) or sent: Unicode tag characters, an
	// escape sequence concealing the rest of a terminal line or bidi
	// controls would otherwise give the model instructions the person
	// read and accepted without seeing. Redacted after: a secret split by
	// a hidden character is whole again once it is stripped.
	text = s.Redact(catalog.Strip(text))
	if text != "" {
		if len(text) > MaxInstructions {
			text = strings.ToValidUTF8(text[:MaxInstructions], "")
		}
		in.text, in.hash = text, InstructionsHash(text)
	}
	s.mu.Lock()
	l, trusted := s.launch, s.trusted && s.cfg.Scope != config.ScopeClient
	s.mu.Unlock()
	if trusted {
		g, ok := s.m.trust.Granted(l)
		pin := in.hash
		if pin == "" {
			pin = InstructionsHash("") // "none" is pinned too: instructions that appear later are a change
		}
		switch {
		case !ok:
		case g.Instructions == "":
			if _, err := s.m.trust.PinInstructions(l, pin, false); err != nil {
				s.m.log.Warn("mcp trust: instructions not pinned", zap.String("server", s.cfg.Name), zap.Error(err))
			}
		case g.Instructions != pin:
			in.pending = in.hash != "" // instructions taken away need no acceptance
			if !in.pending {
				_, _ = s.m.trust.PinInstructions(l, pin, true)
			}
		}
	}
	s.mu.Lock()
	s.instr = in
	s.mu.Unlock()
	if in.pending {
		s.m.host.Notice(LevelWarning, fmt.Sprintf(
			"⚠ MCP server %s changed its instructions since you trusted it: the new text is withheld from the model until you accept it (the server manager shows it; kin mcp show %s)",
			s.disp.Name, s.cfg.Name))
	}
}

// AcceptInstructions accepts the changed instructions of the named server,
// whose hash the person was shown: they are pinned in its trust grant and
// reach the model from the next request on. Accepting the instructions
// already accepted is no error.
func (m *Manager) AcceptInstructions(name, hash string) error {
	s := m.server(name)
	if s == nil {
		return fmt.Errorf("%w: %q", ErrUnknownServer, name)
	}
	s.mu.Lock()
	in, l, trusted := s.instr, s.launch, s.trusted
	s.mu.Unlock()
	if in.hash == "" || in.hash != hash {
		return ErrInstructionsChanged
	}
	if !in.pending {
		return nil
	}
	if !trusted {
		return fmt.Errorf("server %q is not trusted: its instructions are not pinned", name)
	}
	if _, err := m.trust.PinInstructions(l, hash, true); err != nil {
		return fmt.Errorf("the accepted instructions could not be saved: %w", err)
	}
	s.mu.Lock()
	if s.instr.hash == hash {
		s.instr.pending = false
	}
	s.mu.Unlock()
	m.host.Notice(LevelInfo, fmt.Sprintf("MCP server %s: its new instructions are accepted and reach the model from the next request on", s.disp.Name))
	return nil
}

// Briefs implements tool.Briefing: the instructions of every connected
// server that the model may have (not withheld), by server name.
func (m *Manager) Briefs() []tool.Brief {
	var out []tool.Brief
	for _, s := range m.sorted() {
		s.mu.Lock()
		if s.conn != nil && s.state == StateConnected && s.instr.text != "" && !s.instr.pending {
			out = append(out, tool.Brief{Server: s.cfg.Name, Text: s.instr.text})
		}
		s.mu.Unlock()
	}
	return out
}

// instructionsRow is what List shows of a server's instructions.
func (s *server) instructionsRow() instructions {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.instr
}
