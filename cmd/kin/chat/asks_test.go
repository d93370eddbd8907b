package chat_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/cmd/kin/chat"
	"github.com/kin-dev/kin/rpc"
)

func options(extra ...map[string]any) []map[string]any {
	out := []map[string]any{{"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"}}
	out = append(out, extra...)
	return append(out, map[string]any{"optionId": "deny", "name": "Deny", "kind": "reject_once"})
}

// An MCP call's approval reads like spec 000 section 1, and "a" grants it.
func TestMCPApprovalBlock(t *testing.T) {
	f, s := fakeChat(t)
	f.notify("approval/request", map[string]any{
		"requestId": "ap_5", "sessionId": "s_fake", "turnId": "t_2", "callId": "call_9",
		"kind": "tool_call", "tool": "mcp__docs__query-docs", "toolKind": "other", "title": "Call query-docs on docs",
		"server": "docs", "destination": "https://mcp.example.com/mcp", "arguments": "{\n  \"query\": \"react hooks\"\n}",
		"warning": "Arguments are sent to this MCP server. kin cannot control what the server does with them.",
		"grant":   map[string]any{"key": "mcp:mcp__docs__query-docs", "label": "Always allow mcp__docs__query-docs"},
		"options": options(map[string]any{"optionId": "allow_always", "name": "Always allow mcp__docs__query-docs in this session", "kind": "allow_always"},
			map[string]any{"optionId": "allow_always_permanent", "name": "Always allow mcp__docs__query-docs in every session", "kind": "allow_always"}),
	})
	want := `[Tool: mcp__docs__query-docs]
Server: "docs"
Destination: "https://mcp.example.com/mcp"
Tool: "query-docs"
Arguments: "{\n  \"query\": \"react hooks\"\n}"
Arguments are sent to this MCP server. kin cannot control what the server does with them.
Approve this operation? [y: Allow once / a: Always allow mcp__docs__query-docs in this session / p: Always allow mcp__docs__query-docs in every session / N: Deny] `
	s.out.waitFor(t, want)
	s.send("a")
	if got := f.waitCall("approval/respond", 1); got["requestId"] != "ap_5" || got["decision"] != "allow_always" {
		t.Errorf("respond %v", got)
	}
	s.send("/quit")
	s.wait()
}

// Server launches offer trust; acknowledgements ask plainly; Enter denies.
func TestLaunchAndAcknowledge(t *testing.T) {
	f, s := fakeChat(t)
	f.notify("approval/request", map[string]any{
		"requestId": "ap_6", "kind": "server_launch", "server": "files", "title": "Start MCP server files",
		"transport": "stdio", "destination": "npx -y @modelcontextprotocol/server-filesystem /data", "scope": "project",
		"arguments": "env TOKEN=●●●●",
		"options":   options(map[string]any{"optionId": "trust", "name": "Trust server", "kind": "allow_always"}),
	})
	f.notify("approval/request", map[string]any{
		"requestId": "ap_7", "sessionId": "s_fake", "turnId": "t_4", "callId": "call_9",
		"kind": "acknowledge_unknown", "tool": "mcp__docs__create-ticket", "title": "mcp__docs__create-ticket may already have run",
		"warning": "The outcome of this call is unknown: it may have happened. It will not be retried. Acknowledge to send your next question.",
		"options": []map[string]any{{"optionId": "allow_once", "name": "Acknowledge and continue", "kind": "allow_once"}, {"optionId": "deny", "name": "Not now", "kind": "reject_once"}},
	})
	out := s.out.waitFor(t, "Approve this operation? [y: Allow once / t: Trust server / N: Deny] ")
	for _, w := range []string{"[Server launch: files] Start MCP server files\n", "Transport: stdio\n", "Command: npx -y @modelcontextprotocol/server-filesystem /data\n", "Settings: env TOKEN=●●●●\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("launch block lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "Acknowledge?") {
		t.Error("the second question was shown before the first was answered")
	}
	s.send("t")
	if got := f.waitCall("approval/respond", 1); got["decision"] != "trust" {
		t.Errorf("launch respond %v", got)
	}
	out = s.out.waitFor(t, "Acknowledge? [y: Acknowledge and continue / N: Not now] ")
	if !strings.Contains(out, "The outcome of this call is unknown") {
		t.Errorf("no warning:\n%s", out)
	}
	s.send("")
	if got := f.waitCall("approval/respond", 2); got["requestId"] != "ap_7" || got["decision"] != "deny" {
		t.Errorf("ack respond %v", got)
	}
	s.send("/quit")
	s.wait()
}

// A question the service withdraws (turn cancelled) leaves the screen.
func TestResolvedElsewhere(t *testing.T) {
	f, s := fakeChat(t)
	f.notify("approval/request", map[string]any{"requestId": "ap_1", "kind": "tool_call", "tool": "bash", "title": "Run ls", "command": "ls", "cwd": "/w", "options": options()})
	s.out.waitFor(t, "Approve this operation? [y: Allow once / N: Deny] ")
	f.notify("approval/resolved", map[string]any{"requestId": "ap_1", "decision": "deny", "reason": "cancelled"})
	s.out.waitFor(t, "(no longer asked: the turn was cancelled)")
	s.out.waitCount(t, "You> ", 2)
	s.send("/quit")
	s.wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.reqs {
		if c.method == "approval/respond" {
			t.Errorf("answered a withdrawn request: %s", c.params)
		}
	}
}

// Forms are asked field by field, with numbers checked and choices numbered.
func TestElicitationForm(t *testing.T) {
	f, s := fakeChat(t)
	f.notify("elicitation/request", map[string]any{
		"requestId": "el_1", "sessionId": "s_fake", "server": "everything", "mode": "form",
		"message": "Please provide your details",
		"fields": []map[string]any{
			{"name": "name", "title": "Name", "type": "string", "required": true},
			{"name": "age", "title": "Age", "type": "integer", "minimum": 0, "maximum": 150},
			{"name": "color", "title": "Favourite colour", "type": "enum", "enum": []string{"red", "green"}, "enumNames": []string{"Red", "Green"}},
			{"name": "subscribe", "title": "Subscribe", "type": "boolean", "default": false},
		}})
	s.out.waitFor(t, "[MCP server everything asks] Please provide your details")
	s.out.waitFor(t, "What you answer goes to MCP server everything.")
	s.out.waitFor(t, "Name (required): ")
	s.send("Ana")
	s.out.waitFor(t, "Age (whole number 0–150, optional): ")
	s.send("thirty")
	s.out.waitFor(t, "Please type a number.")
	s.send("200")
	s.out.waitFor(t, "Please type a number in range 0–150.")
	s.send("31")
	s.out.waitFor(t, "  1) Red\n  2) Green\n")
	s.send("3")
	s.out.waitFor(t, "Please choose 1-2.")
	s.send("1")
	s.out.waitFor(t, "Subscribe (y/n, optional, Enter for no): ")
	s.send("")
	got := f.waitCall("elicitation/respond", 1)
	want := map[string]any{"requestId": "el_1", "action": "accept", "content": map[string]any{"name": "Ana", "age": 31.0, "color": "red", "subscribe": false}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("respond %v\nwant    %v", got, want)
	}

	// Enter on an empty required field declines the whole request.
	f.notify("elicitation/request", map[string]any{"requestId": "el_2", "server": "x", "mode": "form", "message": "Who?",
		"fields": []map[string]any{{"name": "name", "type": "string", "required": true}}})
	s.out.waitFor(t, "name (required): ")
	s.send("")
	if got := f.waitCall("elicitation/respond", 2); got["action"] != "decline" || got["content"] != nil {
		t.Errorf("respond %v", got)
	}

	// /cancel declines too, even halfway through.
	f.notify("elicitation/request", map[string]any{"requestId": "el_3", "server": "x", "mode": "form", "message": "Two things",
		"fields": []map[string]any{{"name": "a", "type": "string"}, {"name": "b", "type": "number"}}})
	s.out.waitFor(t, "a (optional): ")
	s.send("first")
	s.out.waitFor(t, "b (number, optional): ")
	s.send("/cancel")
	if got := f.waitCall("elicitation/respond", 3); got["action"] != "decline" || got["content"] != nil {
		t.Errorf("respond %v", got)
	}
	s.send("/quit")
	s.wait()
}

// Multi-selects list their options by title and take several numbers,
// within minItems and maxItems; formats are checked before sending.
func TestElicitationMultiSelectAndFormats(t *testing.T) {
	f, s := fakeChat(t)
	f.notify("elicitation/request", map[string]any{
		"requestId": "el_1", "server": "everything", "mode": "form", "message": "Details",
		"fields": []map[string]any{
			{"name": "born", "title": "Birthdate", "type": "string", "format": "date"},
			{"name": "fish", "title": "Fish", "type": "multi_select", "enum": []string{"fish-1", "fish-2", "fish-3"},
				"enumNames": []string{"Tuna", "Salmon", "Trout"}, "minItems": 1, "maxItems": 2, "default": []string{"fish-1"}},
			{"name": "tags", "title": "Tags", "type": "multi_select", "enum": []string{"work", "home"}},
		}})
	s.out.waitFor(t, "Birthdate (a date, YYYY-MM-DD, optional): ")
	s.send("1 April")
	s.out.waitFor(t, "Please type a date, YYYY-MM-DD.")
	s.send("1990-04-01")
	s.out.waitFor(t, "Fish:\n  1) Tuna\n  2) Salmon\n  3) Trout\nchoose any of 1-3, separated by commas (1 to 2 of them, optional, Enter for Tuna): ")
	s.send("1, 2, 3")
	s.out.waitFor(t, "Please choose 1 to 2 of them.")
	s.send("4")
	s.out.waitFor(t, `("4" is not one)`)
	s.send("Salmon, 3")
	s.out.waitFor(t, "Tags:\n  1) work\n  2) home\n")
	s.send("")
	got := f.waitCall("elicitation/respond", 1)
	want := map[string]any{"requestId": "el_1", "action": "accept", "content": map[string]any{"born": "1990-04-01", "fish": []any{"fish-2", "fish-3"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("respond %v\nwant    %v", got, want)
	}
	// Enter takes a multi-select's default.
	f.notify("elicitation/request", map[string]any{"requestId": "el_2", "server": "x", "mode": "form", "message": "Fish?",
		"fields": []map[string]any{{"name": "fish", "type": "multi_select", "enum": []string{"a", "b"}, "default": []string{"b"}, "required": true}}})
	s.out.waitFor(t, "Enter for b): ")
	s.send("")
	if got := f.waitCall("elicitation/respond", 2); !reflect.DeepEqual(got["content"], map[string]any{"fish": []any{"b"}}) {
		t.Errorf("respond %v", got)
	}
	s.send("/quit")
	s.wait()
}

// An answer the service refuses names the fields that do not fit: only
// those are asked again, and the others keep what was typed. A pattern
// is checked before sending.
func TestElicitationAsksAgainForTheRefusedFieldsOnly(t *testing.T) {
	f, s := fakeChat(t)
	bad := &jsonrpc2.Error{Code: -32602, Message: `invalid params: the answer does not fit the request: field "member" must match the pattern ^[A-Z]{3}$`}
	bad.SetError(rpc.ElicitationAnswerError{Fields: []rpc.ElicitationFieldError{{Name: "member", Message: "must match the pattern ^[A-Z]{3}$"}}})
	f.set("elicitation/respond", bad)
	f.notify("elicitation/request", map[string]any{"requestId": "el_1", "server": "club", "mode": "form", "message": "Join",
		"fields": []map[string]any{
			{"name": "name", "title": "Name", "type": "string", "required": true},
			{"name": "member", "title": "Member number", "type": "string"},
			{"name": "age", "title": "Age", "type": "integer"},
			{"name": "code", "title": "Code", "type": "string", "pattern": "^[0-9]+$"},
		}})
	s.out.waitFor(t, "Name (required): ")
	s.send("Ana")
	s.out.waitFor(t, "Member number (optional): ")
	s.send("abc")
	s.out.waitFor(t, "Age (whole number, optional): ")
	s.send("31")
	s.out.waitFor(t, "Code (optional): ")
	s.send("x1")
	s.out.waitFor(t, "Please type text matching ^[0-9]+$.")
	s.send("12")
	f.waitCall("elicitation/respond", 1)
	f.set("elicitation/respond", map[string]any{})
	s.out.waitFor(t, "must match the pattern")
	s.out.waitFor(t, "Member number (optional): ")
	s.send("ABC")
	got := f.waitCall("elicitation/respond", 2)
	want := map[string]any{"requestId": "el_1", "action": "accept", "content": map[string]any{"name": "Ana", "member": "ABC", "age": 31.0, "code": "12"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("respond %v\nwant    %v", got, want)
	}
	s.send("/quit")
	s.wait()
}

// URL mode shows the URL and asks; accepting only answers accept.
func TestElicitationURL(t *testing.T) {
	f, s := fakeChat(t)
	url := "https://auth.example.com/authorize?client_id=app-123&state=xyz"
	f.notify("elicitation/request", map[string]any{"requestId": "el_2", "server": "notion", "mode": "url", "purpose": "oauth",
		"message": "Sign in to notion to connect it", "url": url})
	out := s.out.waitFor(t, "Open this URL yourself? kin never opens it. [y/N] ")
	if !strings.Contains(out, "URL: "+url+"\n") {
		t.Errorf("the URL is not shown whole:\n%s", out)
	}
	s.send("y")
	if got := f.waitCall("elicitation/respond", 1); got["action"] != "accept" || got["content"] != nil {
		t.Errorf("respond %v", got)
	}
	s.send("/quit")
	s.wait()
}

// Piped input declines elicitations, --approve-all or not: it is about
// approvals only.
func TestPipedDeclinesElicitation(t *testing.T) {
	f, conn := newFake(t)
	s := run(t, conn, false, func(o *chat.Options) { o.ApproveAll = true })
	f.waitCall("initialized", 1)
	f.notify("elicitation/request", map[string]any{"requestId": "el_9", "server": "x", "mode": "form", "message": "Name?",
		"fields": []map[string]any{{"name": "name", "type": "string", "required": true}}})
	if got := f.waitCall("elicitation/respond", 1); got["action"] != "decline" {
		t.Errorf("respond %v", got)
	}
	s.out.waitFor(t, "declined (non-interactive)")
	s.in.Close()
	s.wait()
}

// /mcp lists rows with their state; text from servers cannot drive the
// terminal.
func TestMCPListAndEscapes(t *testing.T) {
	f, conn := newFake(t)
	f.set("mcp/list", map[string]any{
		"servers": []map[string]any{
			{"name": "files", "scope": "project", "transport": "stdio", "enabled": true, "state": "connected", "tools": 14, "launch": "npx server", "trusted": true},
			{"name": "api", "scope": "global", "transport": "http", "enabled": true, "state": "needs_login", "launch": "https://example.com/mcp", "lastError": "sign-in required\x1b[2J"},
		},
		"shadowed": []map[string]any{{"name": "files", "scope": "global", "transport": "stdio", "launch": "files-server"}},
		"warnings": []string{"/home/ana/.kin/mcp.json: server \"bad\": both command and url are set"},
		"notices":  []string{"found .mcp.json (not loaded)"},
	})
	s := run(t, conn, true, nil)
	s.send("/mcp")
	out := s.out.waitFor(t, "found .mcp.json (not loaded)")
	for _, w := range []string{
		"files  project/stdio  connected  npx server (14 tools), trusted\n",
		"api  global/http  needs_login",
		`sign-in required\x1b[2J`,
		"files  global/stdio  hidden by the project entry of the same name\n",
		`[warning] /home/ana/.kin/mcp.json: server "bad": both command and url are set`,
	} {
		if !strings.Contains(out, w) {
			t.Errorf("/mcp lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("an escape sequence reached the terminal: %q", out)
	}
	f.set("mcp/list", &jsonrpc2.Error{Code: -32603, Message: "MCP support is not available in this build"})
	s.send("/mcp")
	s.out.waitFor(t, "kin: MCP support is not available in this build\n")
	s.send("/quit")
	if code := s.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// Ctrl-D with a question on screen denies it.
func TestInputClosedDenies(t *testing.T) {
	f, s := fakeChat(t)
	f.notify("approval/request", map[string]any{"requestId": "ap_1", "kind": "tool_call", "tool": "bash", "title": "Run ls", "command": "ls", "options": options()})
	s.out.waitFor(t, "Approve this operation?")
	s.in.Close()
	if got := f.waitCall("approval/respond", 1); got["decision"] != "deny" {
		t.Errorf("respond %v", got)
	}
	if code := s.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// A command's approval says how it runs; the header says whether commands
// are confined, and the start-up notice why not.
func TestCommandApprovalShowsTheSandbox(t *testing.T) {
	f, conn := newFake(t)
	f.results["initialize"].(map[string]any)["sandbox"] = map[string]any{"mode": "auto", "mechanism": "bubblewrap", "confined": true}
	s := run(t, conn, true, nil)
	s.out.waitFor(t, "kin chat · model fake-1 · workspace /w · commands confined (bubblewrap)")
	s.out.waitFor(t, "You> ")
	f.notify("approval/request", map[string]any{
		"requestId": "ap_1", "sessionId": "s_fake", "turnId": "t_1", "callId": "c1",
		"kind": "tool_call", "tool": "bash", "toolKind": "execute", "title": "Run curl -sI https://example.com",
		"command": "curl -sI https://example.com", "cwd": "/w",
		"sandbox": map[string]any{"confined": true, "network": true, "writable": []string{"/w", "/home/ana/.kin/cache/sandbox"}},
		"warning": "With network access: this command can connect to any host on the network and to services on this machine.",
		"options": options(),
	})
	s.out.waitFor(t, `[Tool: bash] Run curl -sI https://example.com
Command: curl -sI https://example.com
Cwd: /w
Sandbox: confined; may change only /w, /home/ana/.kin/cache/sandbox, its own /tmp; with network access
With network access: this command can connect to any host on the network and to services on this machine.
`)
	// keys typed before the question's prompt are never its answer: wait
	// for it, as a person does
	s.out.waitFor(t, "Approve this operation?")
	s.send("n")
	f.waitCall("approval/respond", 1)
	f.notify("approval/request", map[string]any{
		"requestId": "ap_2", "sessionId": "s_fake", "turnId": "t_1", "callId": "c2",
		"kind": "tool_call", "tool": "bash", "toolKind": "execute", "title": "Run make", "command": "make", "cwd": "/w",
		"sandbox": map[string]any{"confined": false, "network": true},
		"warning": "No sandbox: bubblewrap (bwrap) is not installed. This command runs unconfined: it can read and change everything you can, and reach the network.",
		"options": options(),
	})
	s.out.waitFor(t, `Cwd: /w
Sandbox: none: runs unconfined
No sandbox: bubblewrap (bwrap) is not installed.`)
	s.out.waitCount(t, "Approve this operation?", 2)
	s.send("n")
	f.waitCall("approval/respond", 2)
	s.send("/quit")
	s.wait()
}

// A form the service closes because its call ended (or its server went
// away) leaves the screen saying so, and nothing is answered.
func TestAFormWhoseCallEndedIsClosedSayingWhy(t *testing.T) {
	f, s := fakeChat(t)
	for i, c := range []struct{ reason, says string }{
		{"call_ended", "(no longer asked: the tool call that asked ended without it)"},
		{"server_gone", "(no longer asked: the MCP server that asked went away)"},
	} {
		id := fmt.Sprintf("el_%d", i+1)
		f.notify("elicitation/request", map[string]any{"requestId": id, "server": "clinic", "mode": "form", "message": "Details",
			"fields": []map[string]any{{"name": "name", "title": "Name", "type": "string", "required": true}}})
		s.out.waitCount(t, "Name (required): ", i+1)
		f.notify("elicitation/resolved", map[string]any{"requestId": id, "action": "cancel", "reason": c.reason})
		s.out.waitFor(t, c.says)
	}
	s.send("/quit")
	s.wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.reqs {
		if c.method == "elicitation/respond" {
			t.Errorf("answered a closed form: %s", c.params)
		}
	}
}

// A project_trust question lists what the folder brings (kind, path,
// what it runs or says, its digest, whether it changed); "t" trusts them.
func TestProjectTrustBlock(t *testing.T) {
	f, s := fakeChat(t)
	f.notify("approval/request", map[string]any{
		"requestId": "ap_8", "sessionId": "s_fake", "turnId": "t_5", "kind": "project_trust",
		"title":   "Trust 2 item(s) this folder brings?",
		"warning": "kin uses none of them until you trust them.",
		"items": []map[string]any{
			{"kind": "hook", "path": ".kin/hooks.json PreToolUse[0].hooks[0]", "name": "PreToolUse Bash", "digest": "sha256:aa", "detail": "sh .kin/check.sh", "changed": true},
			{"kind": "instructions", "path": "AGENTS.md", "digest": "sha256:bb", "detail": "39 bytes"},
		},
		"options": []map[string]any{{"optionId": "trust", "name": "Trust them", "kind": "allow_always"}, {"optionId": "deny", "name": "Not now", "kind": "reject_once"}},
	})
	s.out.waitFor(t, "[Trust this folder's skills, hooks and instructions?] Trust 2 item(s) this folder brings?")
	s.out.waitFor(t, "  hook .kin/hooks.json PreToolUse[0].hooks[0] (PreToolUse Bash) changed since you trusted it")
	s.out.waitFor(t, "      sh .kin/check.sh")
	s.out.waitFor(t, "  instructions AGENTS.md\n      39 bytes\n      sha256:bb")
	// keys typed before the question's prompt are never its answer: wait
	// for it, as a person does
	s.out.waitFor(t, "Approve this operation? [t: Trust them / N: Not now] ")
	s.send("t")
	if got := f.waitCall("approval/respond", 1); got["requestId"] != "ap_8" || got["decision"] != "trust" {
		t.Errorf("respond %v", got)
	}
	s.send("/quit")
	s.wait()
}
