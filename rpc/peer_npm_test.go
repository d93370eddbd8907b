package rpc_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// npmServer finds an npm MCP server's binary in KIN_TEST_NPM_DIR, or skips
// (fails under KIN_REQUIRE_NPM=1, as CI runs).
func npmServer(t *testing.T, bin string) string {
	t.Helper()
	dir := os.Getenv("KIN_TEST_NPM_DIR")
	p := filepath.Join(dir, "node_modules", ".bin", bin)
	_, err := os.Stat(p)
	_, nodeErr := exec.LookPath("node")
	switch {
	case dir != "" && err == nil && nodeErr == nil:
		return p
	case os.Getenv("KIN_REQUIRE_NPM") == "1":
		t.Fatalf("KIN_REQUIRE_NPM=1 but %s cannot run (KIN_TEST_NPM_DIR=%q, node: %v)", p, dir, nodeErr)
	}
	t.Skipf("set KIN_TEST_NPM_DIR to a folder with %s installed (and node on PATH)", bin)
	return ""
}

// server-everything's prompts are commands: listed with their arguments,
// and /everything:<prompt> asks what the prompt says.
func TestCommandsListTheEverythingServersPromptsAndRunOne(t *testing.T) {
	bin := npmServer(t, "mcp-server-everything")
	w := newWorld(t, map[string]any{"everything": map[string]any{"command": bin, "args": []string{"stdio"}}})
	ed := w.editor()
	respond(ed, ed.Wait("approval/request", rpctest.Field("kind", "server_launch")), "trust")
	ed.Wait("mcp/status", rpctest.All(rpctest.Field("server", "everything"), rpctest.Field("state", "connected")))
	ed.Wait("commands/changed", nil)
	sid := newSession(t, ed)

	var list rpc.CommandsListResult
	ed.MustCall("commands/list", rpc.CommandsListParams{SessionID: sid}, &list)
	byName := map[string]rpc.CommandInfo{}
	for _, c := range list.Commands {
		byName[c.Name] = c
	}
	simple, args := byName["everything:simple-prompt"], byName["everything:args-prompt"]
	if simple.Source != "everything" || args.Source != "everything" {
		t.Fatalf("commands %+v", list.Commands)
	}
	if len(args.Arguments) != 2 || args.Arguments[0].Name != "city" || !args.Arguments[0].Required || args.InputHint != "city=… [state=…]" {
		t.Errorf("args-prompt %+v", args)
	}
	if _, ok := byName["undo"]; !ok {
		t.Errorf("kin's own commands are missing: %+v", list.Commands)
	}

	// A missing required argument: refused before anything is fetched.
	if code, msg := ed.CallErr("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "/everything:args-prompt"}); code != rpc.CodeInvalidParams || !strings.Contains(msg, "city") {
		t.Errorf("missing city: %d %s", code, msg)
	}
	w.model.Script(modeltest.Reply{Text: []string{"Sunny."}})
	var res rpc.TurnStartResult
	ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "/everything:args-prompt city=Lisbon"}, &res)
	want := "What's weather in Lisbon?"
	if res.TurnID == "" || res.Command == nil || res.Command.Inserted != want {
		t.Fatalf("turn/start %+v %+v", res, res.Command)
	}
	started := ed.Wait("turn/started", rpctest.Field("turnId", res.TurnID))
	if started["input"] != want {
		t.Errorf("the person sees %q", started["input"])
	}
	completed(ed, res.TurnID)
	if got := w.model.Requests()[0].LastUserText(); got != want {
		t.Errorf("the model was asked %q", got)
	}
}
