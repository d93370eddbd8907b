package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// runTurn starts a turn of bash calls (call id -> command) in the running
// kin serve and answers each approval with decide's decision ("always":
// allow_always in every session). It returns the call ids that were asked.
func runTurn(t *testing.T, p *proc, m *modeltest.Server, sid any, id *int, decide map[string]string, calls ...[2]string) []string {
	t.Helper()
	var cs []modeltest.Call
	for _, c := range calls {
		b, _ := json.Marshal(map[string]string{"command": c[1]})
		cs = append(cs, modeltest.Call{ID: c[0], Name: "bash", Arguments: string(b)})
	}
	m.Script(modeltest.Reply{Calls: cs}, modeltest.Reply{Text: []string{"done"}})
	*id++
	p.send(req(*id, "turn/start", map[string]any{"sessionId": sid, "input": "run"}))
	var asked []string
	done := p.until(func(f map[string]any) bool {
		if f["method"] == "approval/request" {
			ps := f["params"].(map[string]any)
			call := ps["callId"].(string)
			asked = append(asked, call)
			params := map[string]any{"requestId": ps["requestId"], "decision": decide[call]}
			if decide[call] == "always" {
				params["decision"], params["permanent"] = "allow_always", true
			}
			*id++
			p.send(req(*id, "approval/respond", params))
		}
		return f["method"] == "turn/completed"
	})
	if st := done["params"].(map[string]any)["status"]; st != "completed" {
		t.Fatalf("turn %v", done)
	}
	return asked
}

// grantKeys reads $KIN_HOME/grants.json.
func grantKeys(t *testing.T, home string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "grants.json"))
	if err != nil {
		t.Fatal(err)
	}
	var list []struct{ ID, Key string }
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, g := range list {
		keys = append(keys, g.Key)
	}
	return keys
}

// A permanent grant revoked with `kin grants revoke` while `kin serve` runs
// stops answering at once, and the running kin's next grant does not write
// it back.
func TestBinaryRevokedGrantIsNotHonoured(t *testing.T) {
	m := modeltest.New()
	defer m.Close()
	p := startServe(t, "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+m.URL())
	p.send(req(1, "initialize", map[string]any{}))
	p.until(idIs(1))
	p.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	p.send(req(2, "session/new", nil))
	sid := p.until(idIs(2))["result"].(map[string]any)["session"].(map[string]any)["sessionId"]
	id := 2

	if asked := runTurn(t, p, m, sid, &id, map[string]string{"c1": "always"}, [2]string{"c1", "echo one"}); len(asked) != 1 {
		t.Fatalf("asked %v", asked)
	}
	if asked := runTurn(t, p, m, sid, &id, nil, [2]string{"c2", "echo granted"}); len(asked) != 0 {
		t.Fatalf("the grant did not answer: asked %v", asked)
	}
	cmd := exec.Command(kinBin, "grants", "list")
	cmd.Env = []string{"KIN_HOME=" + p.home, "HOME=" + p.home}
	out, err := cmd.CombinedOutput()
	gid, _, _ := strings.Cut(string(out), "\t")
	if err != nil || !strings.HasPrefix(gid, "p_") || !strings.Contains(string(out), "bash\tAlways allow `echo`") {
		t.Fatalf("kin grants list: %v\n%s", err, out)
	}
	cmd = exec.Command(kinBin, "grants", "revoke", gid)
	cmd.Env = []string{"KIN_HOME=" + p.home, "HOME=" + p.home}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kin grants revoke: %v\n%s", err, out)
	}

	asked := runTurn(t, p, m, sid, &id, map[string]string{"c3": "allow_once", "c4": "always"},
		[2]string{"c3", "echo revoked"}, [2]string{"c4", "pwd"})
	if strings.Join(asked, ",") != "c3,c4" {
		t.Errorf("asked %v, want c3 (revoked) and c4 (new)", asked)
	}
	if keys := grantKeys(t, p.home); strings.Join(keys, ",") != "bash:pwd" {
		t.Errorf("grants.json holds %v, want only bash:pwd", keys)
	}
}

// A server name that is not valid UTF-8 (the byte \xe8), too long or with a
// control character is refused, by `kin mcp add` and by mcp/add in a raw
// frame, saying what a name may be; nothing is written.
func TestBinaryRefusesBadServerNames(t *testing.T) {
	home, wd := t.TempDir(), t.TempDir()
	for _, name := range []string{"\xe8", strings.Repeat("n", 65), "a\x1bb"} {
		cmd := exec.Command(kinBin, "mcp", "add", "--scope", "global", name, "--", "srv")
		cmd.Env = []string{"KIN_HOME=" + home, "HOME=" + home}
		cmd.Dir = wd
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "a name is 1 to 64 characters of valid UTF-8") {
			t.Errorf("kin mcp add %q: %v\n%s", name, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "mcp.json")); !os.IsNotExist(err) {
		t.Errorf("mcp.json written: %v", err)
	}

	p := startServe(t)
	p.send(req(1, "initialize", map[string]any{}))
	p.until(idIs(1))
	p.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	body := "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"mcp/add\",\"params\":{\"scope\":\"global\",\"name\":\"\xe8\",\"config\":{\"command\":\"srv\"}}}"
	p.sendRaw("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
	e := p.until(idIs(2))["error"].(map[string]any)
	if e["code"] != -32602.0 || !strings.Contains(e["message"].(string), "a name is 1 to 64 characters of valid UTF-8") {
		t.Errorf("mcp/add of \\xe8: %v", e)
	}
	p.send(req(3, "mcp/list", nil))
	if servers := p.until(idIs(3))["result"].(map[string]any)["servers"].([]any); len(servers) != 0 {
		t.Errorf("servers after the refusal: %v", servers)
	}
}
