package acp

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/tool"
)

// statusOf maps kin's call statuses onto ACP's four. kin's own status goes
// along in _meta (see kinMeta): "denied", "unknown" and "output_limit" say
// more than "failed" or "completed" can.
func statusOf(kin string) string {
	switch kin {
	case agent.CallPending, agent.CallAwaitingApproval:
		return StatusPending
	case agent.CallRunning, agent.CallWorking:
		return StatusInProgress
	case string(tool.StatusCompleted), string(tool.StatusOutputLimit):
		return StatusCompleted
	}
	return StatusFailed // failed, denied, unknown
}

// kindOf maps a tool's kind onto ACP's ToolKind. kin's kinds are ACP's
// names already; search is a read to kin (it needs no approval) and its
// own kind to ACP.
func kindOf(name string, k tool.Kind) string {
	if name == "search" {
		return "search"
	}
	switch k {
	case tool.KindRead, tool.KindEdit, tool.KindExecute, tool.KindFetch:
		return string(k)
	}
	return "other"
}

// kinMeta is what kin adds to a tool call: its own status and name.
func kinMeta(status, name string) Meta {
	m := map[string]any{"status": status}
	if name != "" {
		m["tool"] = name
	}
	return Meta{"kin": m}
}

// titleOf is the call's one-line title: the approval's when there is one
// ("Edit main.go", "Run go test"), else the tool and the path or pattern it
// was given (args: the arguments object, nil when they are none).
func titleOf(c agent.ToolCall, args map[string]any) string {
	if c.Title != "" {
		return c.Title
	}
	for _, k := range []string{"path", "pattern", "command", "url"} {
		if s, ok := args[k].(string); ok && s != "" {
			return c.Name + " " + oneLine(s)
		}
	}
	return c.Name
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	return s
}

// rawInput is the call's arguments as JSON (a string when they are not).
func rawInput(args string) any {
	if strings.TrimSpace(args) == "" {
		return nil
	}
	var v any
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		return args
	}
	return v
}

// locationsOf lists the files a call names (its "path" argument, resolved
// against the session's working directory) and the files its diffs change,
// so a client can follow along. Only files below the working directory
// (symlinks resolved) whose names do not say they hold secrets: a client
// following the agent (Zed) opens a location on screen as the call is
// announced, before the person is asked about reading it, and the model
// names any path it likes (~/.aws/credentials, a .env).
func locationsOf(c agent.ToolCall, args map[string]any, cwd string) []Location {
	var out []Location
	if cwd == "" {
		return nil
	}
	top := boundary.RealPath(filepath.Clean(cwd))
	seen := map[string]bool{}
	add := func(p string) {
		if p == "" {
			return
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		p = filepath.Clean(p)
		real := boundary.RealPath(p)
		rel, err := filepath.Rel(top, real)
		if !boundary.Within(top, real) || err != nil || boundary.SecretName(filepath.ToSlash(rel)) != "" {
			return
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, Location{Path: p})
		}
	}
	if p, ok := args["path"].(string); ok {
		add(p)
	}
	for _, ct := range c.Content {
		if ct.Diff != nil {
			add(ct.Diff.Path)
		}
	}
	return out
}

// contentOf is a call's content as ACP shows it: diffs as diffs, a
// command's output and any other text as text (kin runs commands itself,
// not in client terminals, so there is no terminal id to point at). A call
// that produced no content shows its output: what the model was told. An
// MCP result's resource links follow as resource_link blocks, which a
// client offers to open (and which a later prompt may attach: kin reads
// them from their server).
func contentOf(cs []tool.Content, output string, links []tool.Link) []ToolCallContent {
	var out []ToolCallContent
	for _, c := range cs {
		switch {
		case c.Diff != nil:
			out = append(out, diffContent(*c.Diff))
		case c.Text != "":
			out = append(out, textContent(c.Text))
		}
	}
	if len(out) == 0 && output != "" {
		out = append(out, textContent(output))
	}
	for _, l := range links {
		name := l.Name
		if name == "" {
			name = l.URI
		}
		b := ContentBlock{Type: "resource_link", URI: l.URI, Name: name, Title: l.Title, MimeType: l.MIMEType}
		out = append(out, ToolCallContent{Type: "content", Content: &b})
	}
	return out
}

func textContent(s string) ToolCallContent {
	b := TextBlock(s)
	return ToolCallContent{Type: "content", Content: &b}
}

// diffContent is one file's change; a new file has no oldText.
func diffContent(d tool.Diff) ToolCallContent {
	c := ToolCallContent{Type: "diff", Path: d.Path, NewText: &d.NewText}
	if d.OldText != "" {
		c.OldText = &d.OldText
	}
	return c
}

// toolCallUpdate maps one of kin's tool call events. The first report of a
// call is a tool_call with everything known; later ones are
// tool_call_updates with what may have changed.
func toolCallUpdate(c agent.ToolCall, first bool, cwd string) ToolCall {
	input := rawInput(c.Arguments) // parsed once: the title and the locations read it too
	args, _ := input.(map[string]any)
	u := ToolCall{
		SessionUpdate: UpdateToolCallUpdate,
		ToolCallID:    c.CallID,
		Status:        statusOf(c.Status),
		Meta:          kinMeta(c.Status, c.Name),
	}
	if c.Subagent != nil {
		u.Meta["kin"].(map[string]any)["subagent"] = subagentMeta(c.Subagent)
	}
	if first {
		u.SessionUpdate = UpdateToolCall
		u.Kind = kindOf(c.Name, c.Kind)
		u.RawInput = input
	}
	if first || c.Title != "" {
		u.Title = titleOf(c, args)
	}
	if locs := locationsOf(c, args, cwd); len(locs) > 0 {
		u.Locations = locs
	}
	if final(c.Status) {
		u.Content = contentOf(c.Content, c.Output, c.Links)
	}
	if c.Reason != "" { // why a denied call was not run, in the person's words
		u.Meta["kin"].(map[string]any)["reason"] = c.Reason
	}
	return u
}

// final reports whether a status is a call's last.
func final(status string) bool {
	switch status {
	case agent.CallPending, agent.CallAwaitingApproval, agent.CallRunning, agent.CallWorking:
		return false
	}
	return true
}
