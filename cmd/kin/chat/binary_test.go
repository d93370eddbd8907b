package chat_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// These tests run the real kin binary, built once from ./cmd/kin, as a
// person would: `kin chat` starts `kin serve` itself and talks to it over
// pipes with the real framing.

var (
	buildOnce sync.Once
	binDir    string
	kinBin    string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// kin returns the path of the built binary.
func kin(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the kin binary")
	}
	if bin := os.Getenv("KIN_CHAT_TEST_BIN"); bin != "" {
		// Another build, to compare (BenchmarkSpawnToPrompt before and after).
		return bin
	}
	buildOnce.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			buildErr = err
			return
		}
		if binDir, err = os.MkdirTemp("", "kin-chat-test-"); err != nil {
			buildErr = err
			return
		}
		kinBin = filepath.Join(binDir, "kin")
		cmd := exec.Command(goBin, "build", "-o", kinBin, "github.com/kin-dev/kin/cmd/kin")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return kinBin
}

// binEnv is the environment of a kin process: this one's, less anything
// that would reach a real model service or the person's KIN_HOME.
func (e *env) binEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "OPENAI_") || strings.HasPrefix(k, "KIN_") || k == "HOME" || k == "NO_COLOR" {
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "HOME="+e.Home, "KIN_HOME="+e.Home)
	for k, v := range e.Vars {
		out = append(out, k+"="+v)
	}
	return out
}

type result struct {
	code           int
	stdout, stderr string
}

// chatPiped runs `kin chat args...` with stdin from a string.
func (e *env) chatPiped(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(kin(t), append([]string{"chat"}, args...)...)
	cmd.Dir, cmd.Env = e.WS, e.binEnv()
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("kin chat did not exit:\n%s\n%s", stdout.String(), stderr.String())
	}
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatal(err)
	}
	return r
}

// Piped questions against the real binary: answers stream out, the bash
// call is denied (no --approve-all), the trace is written masked, and the
// run exits 0 because every turn completed.
func TestBinaryPiped(t *testing.T) {
	e := newEnv(t)
	e.Vars["OPENAI_API_KEY"] = "sk-canary-5e1f"
	e.Model.Script(
		modeltest.Reply{Text: []string{"Hello ", "from ", "kin."}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "touch made"})}}},
		modeltest.Reply{Text: []string{"It was denied."}},
	)
	trace := filepath.Join(e.Home, "trace.jsonl")
	r := e.chatPiped(t, "hello\nmake a file\n/sessions\n", "--trace", trace)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"You> hello\nAssistant> Hello from kin.\n",
		"[Tool: bash] Run touch made\nCommand: touch made\nCwd: " + e.WS + "\n",
		"denied (non-interactive; use --approve-all)\n",
		"[tool] bash: Run touch made … denied\n",
		"Assistant> It was denied.\n",
		`"hello"  2 turns`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(e.WS, "made")); err == nil {
		t.Error("the command ran without approval")
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatalf("no trace: %v", err)
	}
	if !strings.Contains(string(b), `"method":"approval/respond"`) || !strings.Contains(string(b), `"decision":"deny"`) {
		t.Errorf("trace lacks the denial:\n%s", b)
	}
	for _, out := range []string{string(b), r.stdout, r.stderr} {
		if strings.Contains(out, "sk-canary-5e1f") {
			t.Errorf("the API key leaked:\n%s", out)
		}
	}
	if _, err := os.Stat(filepath.Join(e.Home, "logs", "chat-serve.log")); err != nil {
		t.Errorf("the service's log is not in KIN_HOME/logs: %v", err)
	}
}

// --approve-all lets the same call run.
func TestBinaryApproveAll(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "echo from-bash > made"})}}},
		modeltest.Reply{Text: []string{"made it"}},
	)
	r := e.chatPiped(t, "make a file\n", "--approve-all")
	if r.code != 0 || !strings.Contains(r.stdout, "approved (--approve-all)") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(e.WS, "made")); string(b) != "from-bash\n" {
		t.Errorf("made = %q", b)
	}
}

// No key: the exact advice, and exit 2.
func TestBinaryMissingKey(t *testing.T) {
	e := newEnv(t)
	delete(e.Vars, "OPENAI_API_KEY")
	r := e.chatPiped(t, "hello\n")
	if r.code != 2 {
		t.Errorf("exit %d, want 2", r.code)
	}
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "kin: set OPENAI_API_KEY") {
		t.Errorf("stderr %q, want one line starting %q", r.stderr, "kin: set OPENAI_API_KEY")
	}
	if r.stdout != "" {
		t.Errorf("stdout %q", r.stdout)
	}
	if len(e.Model.Requests()) != 0 {
		t.Error("the model was called")
	}
}

// A failed turn: exit 1.
func TestBinaryFailedTurn(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(modeltest.Reply{HTTPStatus: 401, ErrorMessage: "Incorrect API key provided"})
	r := e.chatPiped(t, "hello\n")
	if r.code != 1 || !strings.Contains(r.stdout, "[turn failed]") {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// --connect attaches to `kin serve --listen`; --trace is then written on
// the client side, and --rpc prints the exchange to stderr, both masked.
func TestBinaryConnect(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(modeltest.Reply{Text: []string{"over tcp"}})
	srv := exec.Command(kin(t), "serve", "--listen", "127.0.0.1:0")
	srv.Dir, srv.Env = e.WS, e.binEnv()
	stderr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "kin: listening on "); ok {
				addr <- a
			}
		}
	}()
	var a string
	select {
	case a = <-addr:
	case <-time.After(timeout):
		t.Fatal("kin serve --listen did not say where it listens")
	}
	trace := filepath.Join(e.Home, "client-trace.jsonl")
	r := e.chatPiped(t, "hello\n", "--connect", a, "--trace", trace, "--rpc")
	if r.code != 0 || !strings.Contains(r.stdout, "Assistant> over tcp\n") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, `--> {"id":0,"jsonrpc":"2.0","method":"initialize"`) || !strings.Contains(r.stderr, `<-- {"jsonrpc":"2.0","method":"turn/delta"`) {
		t.Errorf("--rpc did not print the exchange:\n%s", r.stderr)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var first struct {
		Dir string          `json:"dir"`
		Msg json.RawMessage `json:"msg"`
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if err := json.Unmarshal([]byte(line), &first); err != nil || first.Dir != "out" || !strings.Contains(string(first.Msg), `"initialize"`) {
		t.Errorf("trace starts %q (%v)", line, err)
	}
	if strings.Contains(string(b)+r.stderr, "sk-test-canary") {
		t.Error("the API key leaked")
	}

	r = e.chatPiped(t, "hello\n", "--connect", "192.0.2.1:7777")
	if r.code != 2 || !strings.Contains(r.stderr, "only loopback addresses are allowed") {
		t.Errorf("non-loopback --connect: exit %d, %q", r.code, r.stderr)
	}
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// One-shot: `kin chat QUESTION` asks in a new session and exits with the
// turn's status. Its standard output, not a terminal, gets the answer alone;
// what happened on the way (the denied call) goes to standard error; no
// terminal means no one to ask, so the call is denied.
func TestBinaryOneShot(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "touch made"})}}},
		modeltest.Reply{Text: []string{"Two ", "plus two is four."}},
		modeltest.Reply{HTTPStatus: 401, ErrorMessage: "Incorrect API key provided"},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c2", Name: "bash", Arguments: args(map[string]any{"command": "touch made"})}}},
		modeltest.Reply{Text: []string{"made it"}},
	)
	r := e.chatPiped(t, "this line is not read\n", "what is", "2+2?")
	if r.code != 0 || r.stdout != "Two plus two is four.\n" {
		t.Fatalf("exit %d\nstdout %q\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "[tool] bash: Run touch made … denied") || !strings.Contains(r.stderr, "denied (non-interactive; use --approve-all)") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.WS, "made")); err == nil {
		t.Error("the command ran without approval")
	}
	reqs := e.Model.Requests()
	if q := reqs[0].LastUserText(); q != "what is 2+2?" {
		t.Errorf("the model was asked %q", q)
	}
	if len(reqs) != 2 {
		t.Errorf("%d requests: the line on stdin was asked too?", len(reqs))
	}

	r = e.chatPiped(t, "", "hello")
	if r.code != 1 || !strings.Contains(r.stderr, "[turn failed]") {
		t.Errorf("failed turn: exit %d\nstdout %q\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	r = e.chatPiped(t, "", "--approve-all", "make a file")
	if r.code != 0 || r.stdout != "made it\n" {
		t.Errorf("--approve-all: exit %d\nstdout %q\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.WS, "made")); err != nil {
		t.Error("--approve-all did not run the command")
	}
}

// A one-shot run and a piped run each make a session marked with its
// origin; an editor's session list can leave them out (session/list
// interactive); kin chat's /sessions lists them, saying so.
func TestBinaryOneShotAndPipedSessionsAreMarked(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(
		modeltest.Reply{Text: []string{"one-shot answer"}},
		modeltest.Reply{Text: []string{"piped answer"}},
	)
	if r := e.chatPiped(t, "", "a one-shot question"); r.code != 0 {
		t.Fatalf("one-shot: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.chatPiped(t, "a piped question\n"); r.code != 0 {
		t.Fatalf("piped: exit %d\n%s", r.code, r.stderr)
	}
	ed := rpctest.Start(t, e.Options())
	ed.Initialize(e.WS)
	var person rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{Title: "a person's"}, &person)
	var all, interactive rpc.SessionListResult
	ed.MustCall("session/list", struct{}{}, &all)
	ed.MustCall("session/list", rpc.SessionListParams{Interactive: true}, &interactive)
	origins := map[string]int{}
	for _, s := range all.Sessions {
		origins[s.Origin]++
	}
	if origins["chat-oneshot"] != 1 || origins["chat-piped"] != 1 || origins[""] != 1 {
		t.Errorf("origins listed: %v", origins)
	}
	if len(interactive.Sessions) != 1 || interactive.Sessions[0].SessionID != person.Session.SessionID {
		t.Errorf("interactive sessions: %+v", interactive.Sessions)
	}
	if r := e.chatPiped(t, "/sessions\n"); !strings.Contains(r.stdout, "one-shot run") || !strings.Contains(r.stdout, "piped run") {
		t.Errorf("/sessions does not say which runs made them:\n%s", r.stdout)
	}
	var bad rpc.SessionResult
	if err := ed.Call("session/new", rpc.SessionNewParams{Origin: "Not An Origin"}, &bad); err == nil || !strings.Contains(err.Error(), "origin") {
		t.Errorf("a bad origin: %v", err)
	}
}
