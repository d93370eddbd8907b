package manager

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/kin-dev/kin/mcp/calltool"
	"github.com/kin-dev/kin/mcp/catalog"
	"github.com/kin-dev/kin/mcp/connect"
)

// What one server's prompts may be: enough for real servers, bounded so a
// server cannot flood the command list.
const (
	maxPromptPages = 16
	maxPrompts     = 100
	maxPromptArgs  = 20
	maxPromptName  = 64
	// MaxPromptText bounds the text a prompt inserts as a question.
	MaxPromptText = 256 << 10
)

// Prompt is one prompt of a connected server: what an editor offers as
// the command /<server>:<name>. Texts are the server's, sanitised.
type Prompt struct {
	Server      string
	Name        string // the prompt's name on its server
	Title       string
	Description string
	Arguments   []PromptArgument
}

// PromptArgument is one argument a prompt takes.
type PromptArgument struct {
	Name        string
	Description string
	Required    bool
}

// PromptsHost is implemented by a Host that shows the prompts (as
// commands): it hears when a server's prompts change (connected, listed
// again after a change notice, disconnected).
type PromptsHost interface {
	PromptsChanged()
}

// Prompts lists the prompts of every connected server, by server and name.
func (m *Manager) Prompts() []Prompt {
	var out []Prompt
	for _, s := range m.sorted() {
		s.mu.Lock()
		if s.conn != nil && s.state == StateConnected {
			out = append(out, s.prompts...)
		}
		s.mu.Unlock()
	}
	return out
}

// ErrNoPrompt is wrapped by GetPrompt for a server or prompt kin does not
// know (not configured, not connected, no such prompt).
var ErrNoPrompt = errors.New("no such MCP prompt")

// GetPrompt fetches a prompt with its arguments (prompts/get, sent once,
// never retried) and returns the text it inserts: its messages in order,
// invisible characters removed and the server's secrets redacted.
func (m *Manager) GetPrompt(ctx context.Context, server, name string, args map[string]string) (string, error) {
	s := m.server(server)
	if s == nil {
		return "", fmt.Errorf("%w: MCP server %s is not configured", ErrNoPrompt, catalog.Label(server))
	}
	s.mu.Lock()
	var p *Prompt
	for i := range s.prompts {
		if s.prompts[i].Name == name {
			p = &s.prompts[i]
		}
	}
	s.mu.Unlock()
	cs, ok := s.Session()
	switch {
	case !ok:
		return "", fmt.Errorf("%w: MCP server %s is not connected", ErrNoPrompt, catalog.Label(server))
	case p == nil:
		return "", fmt.Errorf("%w: MCP server %s has no prompt %s", ErrNoPrompt, catalog.Label(server), catalog.Label(name))
	}
	var missing []string
	for _, a := range p.Arguments {
		if a.Required && args[a.Name] == "" {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("prompt %s:%s needs %s", server, name, strings.Join(missing, ", "))
	}
	for k := range args {
		if !p.takes(k) {
			return "", fmt.Errorf("prompt %s:%s takes no argument %q", server, name, k)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, s.Timeout())
	defer cancel()
	res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("MCP server %s: prompts/get %s: %s", catalog.Label(server), catalog.Label(name), s.redactErr(err))
	}
	if len(res.InputRequests) > 0 {
		return "", fmt.Errorf("MCP server %s asked for more input to build prompt %s; kin does not answer that for prompts", catalog.Label(server), catalog.Label(name))
	}
	var parts []string
	for _, msg := range res.Messages {
		if msg == nil {
			continue
		}
		text := calltool.RenderContent(msg.Content)
		if msg.Role == "assistant" {
			text = "(assistant) " + text
		}
		parts = append(parts, text)
	}
	text := strings.TrimSpace(catalog.Strip(s.Redact(strings.Join(parts, "\n\n"))))
	if text == "" {
		return "", fmt.Errorf("MCP server %s: prompt %s has no text", catalog.Label(server), catalog.Label(name))
	}
	if len(text) > MaxPromptText {
		return "", fmt.Errorf("MCP server %s: prompt %s is %d bytes, more than %d", catalog.Label(server), catalog.Label(name), len(text), MaxPromptText)
	}
	return text, nil
}

func (p *Prompt) takes(arg string) bool {
	for _, a := range p.Arguments {
		if a.Name == arg {
			return true
		}
	}
	return false
}

// listPrompts fetches and vets a server's prompts (none when it offers
// none). Prompts whose names cannot be typed as a command are left out with
// the reason.
func (s *server) listPrompts(ctx context.Context, cs *mcp.ClientSession) ([]Prompt, []string, error) {
	caps := cs.InitializeResult().Capabilities
	if caps == nil || caps.Prompts == nil {
		return nil, nil, nil
	}
	var out []Prompt
	var skipped []string
	seen := map[string]bool{}
	cursor := ""
	seenCursor := map[string]bool{"": true}
	for page := 1; ; page++ {
		if page > maxPromptPages {
			return nil, nil, fmt.Errorf("the prompt list has more than %d pages", maxPromptPages)
		}
		res, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, nil, fmt.Errorf("prompts/list: %w", err)
		}
		for _, p := range res.Prompts {
			if p == nil {
				continue
			}
			if len(out) >= maxPrompts {
				return nil, nil, fmt.Errorf("the server lists more than %d prompts", maxPrompts)
			}
			if why := badPromptName(p.Name); why != "" || seen[p.Name] {
				if why == "" {
					why = "listed twice"
				}
				skipped = append(skipped, fmt.Sprintf("%s (%s)", catalog.Label(s.Redact(p.Name)), why))
				continue
			}
			seen[p.Name] = true
			vp, why := vetPrompt(s.cfg.Name, p, s.Redact)
			if why != "" {
				skipped = append(skipped, fmt.Sprintf("%s (%s)", catalog.Label(s.Redact(p.Name)), why))
				continue
			}
			out = append(out, vp)
		}
		if res.NextCursor == "" || seenCursor[res.NextCursor] {
			break
		}
		seenCursor[res.NextCursor] = true
		cursor = res.NextCursor
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, skipped, nil
}

// vetPrompt keeps what kin shows of a prompt: its texts with the server's
// own secrets (headers, env, sign-in) hidden before they are cut (a secret
// cut in two no longer matches); a prompt or argument named with one is
// left out (the name is typed and sent back, so it cannot be masked).
func vetPrompt(server string, p *mcp.Prompt, redact func(string) string) (Prompt, string) {
	title, _ := catalog.Sanitize(redact(p.Title))
	desc, flagged := catalog.Sanitize(redact(p.Description))
	if flagged {
		desc = catalog.FlagPrefix + " " + desc
	}
	out := Prompt{Server: server, Name: p.Name, Title: catalog.Label(title), Description: desc}
	if redact(p.Name) != p.Name {
		return out, "a name holding a secret of the server"
	}
	if len(p.Arguments) > maxPromptArgs {
		return out, fmt.Sprintf("more than %d arguments", maxPromptArgs)
	}
	for _, a := range p.Arguments {
		if a == nil {
			continue
		}
		if why := badPromptName(a.Name); why != "" {
			return out, "argument " + catalog.Label(redact(a.Name)) + ": " + why
		}
		if redact(a.Name) != a.Name {
			return out, "an argument named with a secret of the server"
		}
		d, _ := catalog.Sanitize(redact(a.Description))
		out.Arguments = append(out.Arguments, PromptArgument{Name: a.Name, Description: d, Required: a.Required})
	}
	return out, ""
}

// badPromptName says why a name cannot be typed as part of a command
// ("" when it can): at most 64 characters of letters, digits, "_", "-" and
// ".", so "/server:name arg=value" is never ambiguous.
func badPromptName(n string) string {
	if n == "" || utf8.RuneCountInString(n) > maxPromptName {
		return fmt.Sprintf("a name must have 1 to %d characters", maxPromptName)
	}
	for _, r := range n {
		if !(r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "a name may hold only letters, digits, _, - and ."
		}
	}
	return ""
}

// promptReport tells the person what a listing left out or why it failed;
// a failure keeps the server usable, without prompts.
func (s *server) promptReport(skipped []string, err error) {
	if err != nil {
		s.m.log.Warn("mcp prompts not listed", zap.String("server", s.cfg.Name), zap.Error(err))
		s.m.host.Notice(LevelWarning, fmt.Sprintf("MCP server %s: its prompts could not be listed (its tools work): %s", s.disp.Name, s.redactErr(err)))
	}
	if len(skipped) > 0 {
		s.m.host.Notice(LevelWarning, fmt.Sprintf("MCP server %s: prompts left out: %s", s.disp.Name, strings.Join(skipped, "; ")))
	}
}

// refetchPrompts lists conn's prompts again after a change notice (see
// refreshLoop). A listing that fails keeps the previous prompts.
func (s *server) refetchPrompts(conn *connect.Conn) {
	s.mu.Lock()
	life := s.life
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(life, connect.ConnectTimeout)
	ps, skipped, err := s.listPrompts(ctx, conn.Session)
	cancel()
	s.mu.Lock()
	if s.conn != conn || s.stopped {
		s.mu.Unlock()
		return
	}
	if err == nil {
		s.prompts = ps
	}
	s.mu.Unlock()
	s.promptReport(skipped, err)
	if err == nil {
		s.m.promptsChanged()
	}
}

func (m *Manager) promptsChanged() {
	if h, ok := m.host.(PromptsHost); ok {
		h.PromptsChanged()
	}
}
