package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/sandbox"
)

// hostile is one hostile-repository fixture: a person's home folder (their
// own .bashrc, credentials, kin's home with its settings), a workspace an
// attacker crafted, the scripted model, and the built kin serve over real
// stdio, confined by real bubblewrap. Tests judge by effect: what changed
// on disk, what ran (markers), what reached the model (its requests).
type hostile struct {
	t       *testing.T
	home    string // the person's $HOME
	kinHome string // $HOME/.kin
	ws      string // the workspace (the repository the attacker crafted)
	model   *modeltest.Server
	p       *proc
	id      int
	sid     string
	notices []string
	// env is added to kin's environment (model keys, say), args to kin
	// serve's command line.
	env, args []string
	// answer decides the approvals asked outside a turn (server launches);
	// nil denies them. launches are those asked.
	answer   func(ap map[string]any) string
	launches []map[string]any
	// states are the MCP servers' states as reported (every one, in order).
	states map[string][]string
	// initialized is initialize's result.
	initialized map[string]any
	// distrust answers the project_trust question (what the folder brings:
	// its hooks, skills, instruction files) "not now"; by default the
	// person trusts them, as these fixtures are about other rules.
	distrust bool
}

// canaryKey is kin's model key in every fixture: it must never reach a
// command, a server or the model.
const canaryKey = "sk-canary-kin-model-key"

// newHostile makes the person's home and an empty workspace. The suite
// needs bubblewrap: it skips without it, and fails with KIN_REQUIRE_BWRAP=1
// (as CI runs it).
func newHostile(t *testing.T) *hostile {
	t.Helper()
	if st := sandbox.New(sandbox.Config{}).Status(); !st.Confined {
		if os.Getenv("KIN_REQUIRE_BWRAP") == "1" {
			t.Fatalf("KIN_REQUIRE_BWRAP=1 but commands cannot be confined: %s", st.Reason)
		}
		t.Skipf("the hostile-repository suite runs commands under bubblewrap; none here: %s", st.Reason)
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &hostile{t: t, home: filepath.Join(base, "home"), ws: filepath.Join(base, "repo")}
	h.kinHome = filepath.Join(h.home, ".kin")
	h.write(h.home, ".bashrc", "# the person's own .bashrc\n")
	h.write(h.home, ".ssh/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\nsecret-canary-ssh\n-----END OPENSSH PRIVATE KEY-----\n")
	h.write(h.home, ".aws/credentials", "[default]\naws_secret_access_key = secret-canary-aws\n")
	h.write(h.kinHome, "grants.json", "[]\n")
	if err := os.MkdirAll(h.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	h.model = modeltest.New()
	t.Cleanup(h.model.Close)
	return h
}

// write makes a file below dir (folders as needed).
func (h *hostile) write(dir, name, content string) string {
	h.t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// settings writes $KIN_HOME/settings.json.
func (h *hostile) settings(s string) {
	h.t.Helper()
	h.write(h.kinHome, "settings.json", s)
	os.Chmod(filepath.Join(h.kinHome, "settings.json"), 0o600)
}

// git runs real git in dir as the person would, outside any sandbox (the
// editor's git integration does the same on its own).
func (h *hostile) git(dir string, args ...string) string {
	h.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + h.home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=ana", "GIT_AUTHOR_EMAIL=ana@example.com", "GIT_COMMITTER_NAME=ana", "GIT_COMMITTER_EMAIL=ana@example.com"}
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// repo makes dir a git repository with one commit.
func (h *hostile) repo(dir string) {
	h.t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("KIN_REQUIRE_BWRAP") == "1" {
			h.t.Fatal("the hostile-repository suite runs in CI (KIN_REQUIRE_BWRAP=1) and needs git")
		}
		h.t.Skip("no git")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	if out := h.git(dir, "init", "-q"); out != "" {
		h.t.Fatalf("git init %s: %s", dir, out)
	}
	h.git(dir, "commit", "-q", "--allow-empty", "-m", "init")
}

// start runs kin serve for the workspace folders (the first is ws when
// none are given) and opens a session in mode ("" for the default).
func (h *hostile) start(mode string, roots ...string) {
	h.t.Helper()
	if len(roots) == 0 {
		roots = []string{h.ws}
	}
	cmd := exec.Command(kinBin, append([]string{"serve"}, h.args...)...)
	cmd.Dir = roots[0]
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + h.home, "KIN_HOME=" + h.kinHome,
		"OPENAI_API_KEY=" + canaryKey, "OPENAI_BASE_URL=" + h.model.URL(), "KIN_MODEL=mock-1"}, h.env...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	h.states = nil
	h.p = &proc{t: h.t, cmd: cmd, stdin: stdin, stdout: stdout, out: bufio.NewReader(stdout), stderr: &stderr, home: h.kinHome, dir: roots[0]}
	p := h.p
	h.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if h.t.Failed() {
			h.t.Logf("kin's stderr:\n%s", stderr.String())
		}
	})
	var folders []map[string]any
	for _, r := range roots {
		folders = append(folders, map[string]any{"uri": "file://" + r, "name": filepath.Base(r)})
	}
	h.initialized = h.call("initialize", map[string]any{"capabilities": map[string]any{"approvals": true}, "workspaceFolders": folders})
	p.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	params := map[string]any{}
	if mode != "" {
		params["mode"] = mode
	}
	res := h.call("session/new", params)
	h.sid = res["session"].(map[string]any)["sessionId"].(string)
}

// call sends a request and returns its result, keeping the notices that
// come before it.
func (h *hostile) call(method string, params any) map[string]any {
	h.t.Helper()
	h.id++
	id := h.id
	h.p.send(req(id, method, params))
	for {
		m := h.p.next()
		h.keep(m)
		if m["id"] == float64(id) && m["method"] == nil {
			if m["error"] != nil {
				h.t.Fatalf("%s: %v", method, m["error"])
			}
			r, _ := m["result"].(map[string]any)
			return r
		}
	}
}

// keep notes what a person would see of a frame that is not an answer,
// and answers a server launch's approval.
func (h *hostile) keep(m map[string]any) {
	p, _ := m["params"].(map[string]any)
	switch m["method"] {
	case "notice":
		h.notices = append(h.notices, fmt.Sprint(p["message"]))
	case "mcp/status":
		if h.states == nil {
			h.states = map[string][]string{}
		}
		name := fmt.Sprint(p["server"])
		h.states[name] = append(h.states[name], fmt.Sprint(p["state"]))
	case "approval/request":
		if p["kind"] != "server_launch" {
			return
		}
		h.launches = append(h.launches, p)
		decision := "deny"
		if h.answer != nil {
			decision = h.answer(p)
		}
		h.id++
		h.p.send(req(h.id, "approval/respond", map[string]any{"requestId": p["requestId"], "decision": decision}))
	}
}

// waitFor reads frames until one matches (answering launches on the way).
func (h *hostile) waitFor(match func(m map[string]any) bool) map[string]any {
	h.t.Helper()
	for {
		m := h.p.next()
		h.keep(m)
		if match(m) {
			return m
		}
	}
}

// waitState waits until server has been reported in state (since start).
func (h *hostile) waitState(server, state string) {
	h.t.Helper()
	seen := func() bool {
		for _, st := range h.states[server] {
			if st == state {
				return true
			}
		}
		return false
	}
	for !seen() {
		h.keep(h.p.next())
	}
}

// stop ends kin serve (its sessions and servers with it).
func (h *hostile) stop() {
	h.t.Helper()
	h.p.stdin.Close()
	h.p.wait()
}

// noticed reports whether a notice said sub.
func (h *hostile) noticed(sub string) bool {
	for _, n := range h.notices {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

// turn runs one turn whose model replies are script (a final text reply is
// added). Every approval kin asks for is passed to decide, which answers it
// ("allow_once", "deny", ...); a nil decide means nothing may be asked. It
// returns the approvals asked, and the turn's tool calls as they ended
// (by call id).
func (h *hostile) turn(decide func(ap map[string]any) string, script ...modeltest.Reply) (asked []map[string]any, calls map[string]map[string]any) {
	h.t.Helper()
	h.model.Script(append(script, modeltest.Reply{Text: []string{"done"}})...)
	h.id++
	id := h.id
	h.p.send(req(id, "turn/start", map[string]any{"sessionId": h.sid, "input": "please help"}))
	calls = map[string]map[string]any{}
	for {
		m := h.p.next()
		h.keep(m)
		params, _ := m["params"].(map[string]any)
		switch m["method"] {
		case "approval/request":
			if params["kind"] == "server_launch" {
				continue // answered by keep
			}
			if params["kind"] == "project_trust" {
				decision := "trust"
				if h.distrust {
					decision = "deny"
				}
				h.id++
				h.p.send(req(h.id, "approval/respond", map[string]any{"requestId": params["requestId"], "decision": decision}))
				continue
			}
			asked = append(asked, params)
			decision := "deny"
			if decide == nil {
				h.t.Errorf("kin asked, and nothing should have been asked: %v", params)
			} else {
				decision = decide(params)
			}
			h.id++
			h.p.send(req(h.id, "approval/respond", map[string]any{"requestId": params["requestId"], "decision": decision}))
		case "turn/toolCall":
			switch params["status"] {
			case "completed", "failed", "denied", "unknown", "output_limit":
				calls[fmt.Sprint(params["callId"])] = params
			}
		case "turn/completed":
			if params["sessionId"] == h.sid {
				return asked, calls
			}
		}
		if m["id"] == float64(id) && m["error"] != nil {
			h.t.Fatalf("turn/start: %v", m["error"])
		}
	}
}

// bash is a model's call of the bash tool.
func bash(id, command string) modeltest.Call {
	args, _ := json.Marshal(map[string]any{"command": command})
	return modeltest.Call{ID: id, Name: "bash", Arguments: string(args)}
}

// call is a model's call of a tool with arguments.
func call(id, name string, args map[string]any) modeltest.Call {
	b, _ := json.Marshal(args)
	return modeltest.Call{ID: id, Name: name, Arguments: string(b)}
}

// unasked runs scripts as one command the model calls, each after an echo
// of its name and with its output kept, and returns that output; the
// command must run without asking anyone (a mode that runs confined
// commands unasked, or a grant).
func (h *hostile) unasked(scripts []string) string {
	h.t.Helper()
	asked, calls := h.turn(nil, replies(bash("c1", strings.Join(scripts, "; ")))...)
	if len(asked) != 0 {
		h.t.Fatalf("asked %v", asked)
	}
	return fmt.Sprint(calls["c1"]["output"])
}

// replies puts each call in a reply of its own (the model calls them one
// after the other).
func replies(calls ...modeltest.Call) []modeltest.Reply {
	var out []modeltest.Reply
	for _, c := range calls {
		out = append(out, modeltest.Reply{Calls: []modeltest.Call{c}})
	}
	return out
}

// sent is everything the model service received, raw.
func (h *hostile) sent() string {
	var b strings.Builder
	for _, r := range h.model.Requests() {
		b.Write(r.Raw)
		b.WriteByte('\n')
	}
	return b.String()
}

// exists reports whether a path exists (as anything, a dangling symlink too).
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func allow(map[string]any) string { return "allow_once" }
func deny(map[string]any) string  { return "deny" }
