package acp

import (
	"fmt"
	"strings"

	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/tool"
)

// permissionToolCallID is the tool call a request is about: the call's own
// for a tool call, one of the request's own for what is not a tool call
// (a server launch, an unknown outcome to acknowledge), which kin reports
// as a tool call of its own first, so the client has a card to attach it
// to.
//
// A subagent's call is not one the client knows (its progress shows inside
// the delegate call's content), so its request has a card of its own too.
func permissionToolCallID(req permission.Request) (id string, synthetic bool) {
	if req.Kind == permission.KindToolCall && req.CallID != "" && req.Parent.SessionID == "" {
		return req.CallID, false
	}
	return "kin_" + req.RequestID, true
}

// permissionContent is everything kin shows the person before they decide,
// in ACP's shapes: kin's warning first (as a text block), every file's full
// diff, the full command with where it runs and how it is confined, and
// for MCP calls the server, where it runs and the arguments.
func permissionContent(req permission.Request) []ToolCallContent {
	var out []ToolCallContent
	if req.Warning != "" {
		out = append(out, textContent("⚠ "+req.Warning))
	}
	for _, d := range req.Diffs {
		out = append(out, diffContent(d))
	}
	if req.Command != "" {
		var b strings.Builder
		fmt.Fprintf(&b, "$ %s", req.Command)
		if req.Cwd != "" {
			fmt.Fprintf(&b, "\n(in %s)", req.Cwd)
		}
		if sb := req.Sandbox; sb != nil {
			b.WriteString("\n" + sandboxLine(sb))
		}
		out = append(out, textContent(b.String()))
	}
	if len(req.Items) > 0 {
		// a project_trust or mcp_skill request: what is to be trusted
		var b strings.Builder
		for _, it := range req.Items {
			changed := ""
			if it.Changed {
				changed = " (changed since you trusted it)"
			}
			fmt.Fprintf(&b, "%s %s%s", it.Kind, it.Path, changed)
			if it.Detail != "" {
				fmt.Fprintf(&b, ": %s", it.Detail)
			}
			fmt.Fprintf(&b, "\n  %s\n", it.Digest)
		}
		out = append(out, textContent(strings.TrimRight(b.String(), "\n")))
	}
	switch req.Kind {
	case permission.KindLaunch:
		var b strings.Builder
		fmt.Fprintf(&b, "MCP server %s (%s, %s)\n%s", req.Server, req.Transport, req.Scope, req.Destination)
		out = append(out, textContent(b.String()))
	default:
		if req.Server != "" {
			var b strings.Builder
			fmt.Fprintf(&b, "MCP server %s", req.Server)
			if req.Destination != "" {
				fmt.Fprintf(&b, " (%s)", req.Destination)
			}
			if req.Tool != "" {
				fmt.Fprintf(&b, "\ntool: %s", req.Tool)
			}
			if req.Arguments != "" {
				fmt.Fprintf(&b, "\narguments:\n%s", req.Arguments)
			}
			out = append(out, textContent(b.String()))
		}
	}
	return out
}

func sandboxLine(sb *tool.Sandbox) string {
	switch {
	case !sb.Confined:
		return "not confined: it runs with your full access to files and the network"
	case sb.Network:
		return "confined, with network access; it may change: " + strings.Join(sb.Writable, ", ")
	}
	return "confined, without network access; it may change: " + strings.Join(sb.Writable, ", ")
}

// permissionOptions are kin's options as ACP's: the optionIds are kin's
// decisions (allow_once; allow_always, for this session; trust, for a
// server launch; deny), the kinds ACP's. At most one option of each kind:
// clients map options by kind (CodeCompanion and avante.nvim keep the last
// option of a kind for their one "always" key, agent-shell the first), so
// two allow_always options would let a key meant for "always" pick either.
// kin's "always allow in every session" (allow_always_permanent) is
// therefore not offered over ACP: a client that maps by kind can never turn
// "always" into a standing grant for every session by accident. Permanent
// grants are made where kin shows its own options (VS Code, Neovim, kin
// chat); they answer ACP sessions too.
func permissionOptions(req permission.Request) []PermissionOption {
	out := make([]PermissionOption, 0, len(req.Options))
	for _, o := range req.Options {
		if !offered(o.OptionID) {
			continue
		}
		out = append(out, PermissionOption{OptionID: o.OptionID, Name: o.Name, Kind: o.Kind})
	}
	return out
}

// offered reports whether a decision is one kin offers over ACP (see
// permissionOptions): an answer naming another is refused.
func offered(decision string) bool { return decision != permission.AllowAlwaysPermanent }

// permissionRequest is session/request_permission's params for one of
// kin's approvals. The tool call carries all of kin's content; _meta.kin
// carries kin's own request (its id and kind, the grant an "always"
// option would give, how a command is confined).
func permissionRequest(req permission.Request) RequestPermissionRequest {
	id, _ := permissionToolCallID(req)
	tc := ToolCall{ToolCallID: id, Title: req.Title, Content: permissionContent(req)}
	if req.Kind == permission.KindToolCall {
		tc.Status = StatusPending
	}
	meta := map[string]any{"requestId": req.RequestID, "kind": req.Kind}
	if req.Grant != nil {
		meta["grant"] = req.Grant.Label
	}
	if req.Sandbox != nil {
		meta["sandbox"] = req.Sandbox
	}
	if req.AlwaysAsk {
		meta["alwaysAsk"] = true
	}
	return RequestPermissionRequest{SessionID: req.SessionID, ToolCall: tc, Options: permissionOptions(req), Meta: Meta{"kin": meta}}
}

// syntheticToolCall is the card kin reports for a request that is not a
// tool call, before asking.
func syntheticToolCall(req permission.Request) ToolCall {
	id, _ := permissionToolCallID(req)
	kind := "other"
	if req.Kind == permission.KindLaunch {
		kind = "execute"
		if req.Transport == "http" {
			kind = "fetch"
		}
	}
	title := req.Title
	if title == "" && req.Kind == permission.KindLaunch {
		title = "Start MCP server " + req.Server
	}
	if req.Parent.SessionID != "" {
		title = "Subagent: " + title
		kind = kindOf(req.ToolName, req.ToolKind)
	}
	return ToolCall{SessionUpdate: UpdateToolCall, ToolCallID: id, Title: title, Kind: kind, Status: StatusPending,
		Content: permissionContent(req), Meta: Meta{"kin": map[string]any{"status": "awaiting_approval", "kind": req.Kind}}}
}

// syntheticDone closes the card of a request that is not a tool call once
// it is answered.
func syntheticDone(req permission.Request, decision, reason string) ToolCall {
	id, _ := permissionToolCallID(req)
	status := StatusFailed
	if decision != permission.Deny {
		status = StatusCompleted
	}
	return ToolCall{SessionUpdate: UpdateToolCallUpdate, ToolCallID: id, Status: status,
		Meta: Meta{"kin": map[string]any{"status": decision, "reason": reason, "kind": req.Kind}}}
}
