package rpc_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// withoutBwrap makes the sandbox of e in mode with no bubblewrap on PATH.
func withoutBwrap(t *testing.T, e *env, settingsJSON string) {
	t.Helper()
	t.Setenv("PATH", t.TempDir())
	if settingsJSON != "" {
		if err := os.WriteFile(filepath.Join(e.Home, "settings.json"), []byte(settingsJSON), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e.Sandbox = sandbox.New(sandbox.FromSettings(e.Home))
}

// confinedEnv is an env whose commands run under bubblewrap; without it
// the test skips, or fails with KIN_REQUIRE_BWRAP=1 (as CI runs).
func confinedEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	e.Sandbox = sandbox.New(sandbox.FromSettings(e.Home))
	if st := e.Sandbox.Status(); !st.Confined {
		if os.Getenv("KIN_REQUIRE_BWRAP") == "1" {
			t.Fatalf("KIN_REQUIRE_BWRAP=1 but commands cannot be confined: %s", st.Reason)
		}
		t.Skipf("no sandbox here: %s", st.Reason)
	}
	return e
}

func sandboxNotices(ed *rpctest.Editor) []map[string]any {
	var out []map[string]any
	for _, n := range ed.Notes("notice") {
		if n["source"] == "sandbox" {
			out = append(out, n)
		}
	}
	return out
}

func TestUnconfinedIsSaidAtStartAndOnEveryApproval(t *testing.T) {
	e := newEnv(t)
	withoutBwrap(t, e, "")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "echo ran"})}}},
		modeltest.Reply{Text: []string{"done"}},
	)
	ed := rpctest.Start(t, e.Options())
	init := ed.Initialize(e.WS)
	if s := init.Sandbox; s.Mode != "auto" || s.Confined || s.Mechanism != "" || s.Reason != "bubblewrap (bwrap) is not installed" || !strings.Contains(s.Hint, "apt-get install bubblewrap") {
		t.Fatalf("initialize sandbox %+v", s)
	}
	n := ed.Wait("notice", rpctest.Field("source", "sandbox"))
	if n["level"] != "warning" || !strings.HasPrefix(fmt.Sprint(n["message"]), "Commands run unconfined: bubblewrap (bwrap) is not installed. To confine them: install bubblewrap") {
		t.Fatalf("notice %v", n)
	}
	var res rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{}, &res)
	answerApprovals(ed, func(map[string]any) string { return "allow_once" })
	tid := start(t, ed, res.Session.SessionID, "run it")
	if done := completed(ed, tid); done["status"] != "completed" {
		t.Fatalf("%v", done)
	}
	req := ed.Wait("approval/request", rpctest.Field("callId", "c1"))
	if !strings.HasPrefix(fmt.Sprint(req["warning"]), "No sandbox: bubblewrap (bwrap) is not installed. This command runs unconfined: it can read and change everything you can, and reach the network.") {
		t.Errorf("approval warning %q", req["warning"])
	}
	sb, _ := req["sandbox"].(map[string]any)
	if sb["confined"] != false || sb["network"] != true || sb["writable"] != nil {
		t.Errorf("approval sandbox %v", req["sandbox"])
	}
	grant, _ := req["grant"].(map[string]any)
	if grant["key"] != "bash-unconfined:echo" || grant["label"] != "Always allow unconfined `echo` commands" {
		t.Errorf("grant %v", grant)
	}
	final := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "c1"), rpctest.Field("status", "completed")))
	if sb, _ := final["sandbox"].(map[string]any); sb["confined"] != false || !strings.Contains(fmt.Sprint(final["output"]), "ran") {
		t.Errorf("tool call %v", final)
	}
	// said once per connection, however often initialized comes
	ed.Notify("initialized", struct{}{})
	ed.MustCall("session/list", nil, nil)
	if got := sandboxNotices(ed); len(got) != 1 {
		t.Errorf("%d sandbox notices: %v", len(got), got)
	}
}

func TestRequiredWithoutBwrapRefusesCommands(t *testing.T) {
	e := newEnv(t)
	withoutBwrap(t, e, `{"sandbox":"required"}`)
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "touch made"})}}},
		modeltest.Reply{Text: []string{"I could not run it."}},
	)
	ed, sid := e.editor()
	n := ed.Wait("notice", rpctest.Field("source", "sandbox"))
	if n["level"] != "error" || !strings.HasPrefix(fmt.Sprint(n["message"]), `Commands will not run: settings.json requires a sandbox ("sandbox": "required"), and bubblewrap (bwrap) is not installed.`) {
		t.Fatalf("notice %v", n)
	}
	tid := start(t, ed, sid, "make a file")
	completed(ed, tid)
	c := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "c1"), rpctest.Field("status", "failed")))
	want := `bash: refused, nothing was run: settings.json requires a sandbox for commands ("sandbox": "required"), and bubblewrap (bwrap) is not installed`
	if c["output"] != want {
		t.Errorf("output %q\nwant   %q", c["output"], want)
	}
	if got := ed.Notes("approval/request"); len(got) != 0 {
		t.Errorf("a refused command was put to the person: %v", got)
	}
	if _, err := os.Stat(filepath.Join(e.WS, "made")); err == nil {
		t.Error("the command ran")
	}
}

func TestSandboxOffIsSaid(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.Home, "settings.json"), []byte(`{"sandbox":"off","sandboxWritable":["rel"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e.Sandbox = sandbox.New(sandbox.FromSettings(e.Home))
	ed, _ := e.editor()
	ed.Wait("notice", rpctest.All(rpctest.Field("source", "sandbox"), rpctest.Field("level", "info")))
	got := sandboxNotices(ed)
	if len(got) != 2 || !strings.Contains(fmt.Sprint(got[0]["message"]), `sandbox settings: `+filepath.Join(e.Home, "settings.json")+`: sandboxWritable: "rel" is not an absolute path (left out)`) ||
		got[1]["message"] != `Commands run unconfined: the sandbox is off in settings.json ("sandbox": "off").` {
		t.Fatalf("notices %v", got)
	}
}

func TestConfinedSaysNothingAtStartAndShowsWhatIsWritable(t *testing.T) {
	e := confinedEnv(t)
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "echo x > /var/tmp/kin-escape-test; echo in > here"})}}},
		modeltest.Reply{Text: []string{"done"}},
	)
	ed, sid := e.editor()
	answerApprovals(ed, func(map[string]any) string { return "allow_once" })
	completed(ed, start(t, ed, sid, "try"))
	req := ed.Wait("approval/request", rpctest.Field("callId", "c1"))
	sb, _ := req["sandbox"].(map[string]any)
	writable := fmt.Sprint(sb["writable"])
	if sb["confined"] != true || sb["network"] != false || writable != fmt.Sprintf("[%s %s]", e.WS, filepath.Join(e.Home, "cache", "sandbox", boundary.FolderID(e.WS))) || req["warning"] != nil {
		t.Errorf("approval %v", req)
	}
	c := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "c1"), rpctest.Field("status", "completed")))
	if !strings.Contains(fmt.Sprint(c["output"]), "Read-only file system") {
		t.Errorf("output %v", c["output"])
	}
	if _, err := os.Stat("/var/tmp/kin-escape-test"); err == nil {
		os.Remove("/var/tmp/kin-escape-test")
		t.Error("a confined command wrote outside the workspace")
	}
	if b, _ := os.ReadFile(filepath.Join(e.WS, "here")); string(b) != "in\n" {
		t.Errorf("workspace write: %q", b)
	}
	if got := sandboxNotices(ed); len(got) != 0 {
		t.Errorf("notices %v", got)
	}
}

func TestNetworkIsAskedInWordsAndGrantedApart(t *testing.T) {
	e := confinedEnv(t)
	call := func(id, cmd string, network bool) modeltest.Reply {
		a := map[string]any{"command": cmd}
		if network {
			a["network"] = true
		}
		return modeltest.Reply{Calls: []modeltest.Call{{ID: id, Name: "bash", Arguments: args(a)}}}
	}
	e.Model.Script(
		call("c1", "echo one", true),
		call("c2", "echo two", false), // the network grant does not cover it
		call("c3", "echo three", true),
		call("c4", "echo four", false),
		modeltest.Reply{Text: []string{"done"}},
	)
	ed, sid := e.editor()
	answerApprovals(ed, func(map[string]any) string { return "allow_always" })
	if done := completed(ed, start(t, ed, sid, "go")); done["status"] != "completed" {
		t.Fatalf("%v", done)
	}
	reqs := ed.Notes("approval/request")
	if len(reqs) != 2 || reqs[0]["callId"] != "c1" || reqs[1]["callId"] != "c2" {
		t.Fatalf("asked %v", reqs)
	}
	net, plain := reqs[0], reqs[1]
	if !strings.HasPrefix(fmt.Sprint(net["warning"]), "With network access: this command can connect to any host") {
		t.Errorf("network approval warning %q", net["warning"])
	}
	if sb, _ := net["sandbox"].(map[string]any); sb["confined"] != true || sb["network"] != true {
		t.Errorf("network approval sandbox %v", net["sandbox"])
	}
	if g, _ := net["grant"].(map[string]any); g["key"] != "bash-net:echo" || g["label"] != "Always allow `echo` commands with network access" {
		t.Errorf("network grant %v", g)
	}
	if g, _ := plain["grant"].(map[string]any); g["key"] != "bash:echo" || plain["warning"] != nil {
		t.Errorf("plain approval %v", plain)
	}
	c3 := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "c3"), rpctest.Field("status", "completed")))
	if sb, _ := c3["sandbox"].(map[string]any); sb["network"] != true {
		t.Errorf("c3 %v", c3)
	}
	var grants struct {
		Grants []struct{ Key string } `json:"grants"`
	}
	ed.MustCall("grants/list", nil, &grants)
	var keys []string
	for _, g := range grants.Grants {
		keys = append(keys, g.Key)
	}
	if strings.Join(keys, " ") != "bash-net:echo bash:echo" {
		t.Errorf("grants %v", keys)
	}
}
