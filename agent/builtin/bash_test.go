//go:build unix

package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/agent/tool"
)

func TestBashApproval(t *testing.T) {
	root, env := workspace(t)
	files(t, root, map[string]string{"sub/x": ""})
	a, err := prepareWith(t, "bash", unconfined, env, map[string]any{"command": "go test ./..."})
	if err != nil {
		t.Fatal(err)
	}
	ap := a.Approval
	if ap == nil || ap.Title != "Run go test ./..." || ap.Command != "go test ./..." || ap.Cwd != root {
		t.Fatalf("approval %+v", ap)
	}
	// (the grant of a confined command is pinned in sandbox_linux_test.go)
	if ap.Grant == nil || ap.Grant.Key != "bash-unconfined:go test" || ap.Grant.Label != "Always allow unconfined `go test` commands" {
		t.Fatalf("grant %+v", ap.Grant)
	}
	if ap.Sandbox == nil || ap.Sandbox.Confined || !ap.Sandbox.Network || ap.AutoEditAllows {
		t.Fatalf("sandbox %+v", ap.Sandbox)
	}
	wantContains(t, ap.Warning, "No sandbox: the sandbox is off in settings.json", "runs unconfined", "reach the network")
	long := "echo " + strings.Repeat("x", 200) + "\necho second line"
	a = mustPrepare(t, "bash", env, map[string]any{"command": long, "cwd": "sub"})
	if got := a.Approval.Title; !strings.HasPrefix(got, "Run echo xxx") || len([]rune(got)) != len("Run ")+80 {
		t.Fatalf("title %q", got)
	}
	if a.Approval.Command != long || a.Approval.Cwd != filepath.Join(root, "sub") || a.Approval.Grant != nil {
		t.Fatalf("approval %+v", a.Approval)
	}

	outside := t.TempDir()
	must(t, os.Symlink(outside, filepath.Join(root, "out")))
	for _, cwd := range []string{outside, "..", "out"} {
		_, err := prepare(t, "bash", env, map[string]any{"command": "ls", "cwd": cwd})
		wantErr(t, err, "cwd", "outside the workspace")
	}
	_, err = prepare(t, "bash", env, map[string]any{"command": "ls", "cwd": "sub/x"})
	wantErr(t, err, "not an existing directory")
	_, err = prepare(t, "bash", env, map[string]any{"command": "  "})
	wantErr(t, err, "empty")
	_, err = prepare(t, "bash", env, map[string]any{"command": "ls", "timeout": -1})
	wantErr(t, err, "timeout")
	_, err = prepare(t, "bash", env, map[string]any{"command": "ls", "timeout": 100000})
	wantErr(t, err, "maximum")
}

func TestBashGrantKeys(t *testing.T) {
	cases := map[string]string{
		"go test ./...":                  "bash:go test",
		"go test -run 'TestA|TestB' ./x": "bash:go test",
		"  git status  ":                 "bash:git status",
		"git diff --stat":                "bash:git diff",
		"rm -rf x":                       "bash:rm",
		"ls -la":                         "bash:ls",
		"make":                           "bash:make",
		"npm run test":                   "bash:npm run test",
		"npm install":                    "bash:npm install",
		"cargo build --release":          "bash:cargo build",
		"./scripts/check.sh":             "bash:./scripts/check.sh",
		"pytest -q tests/":               "bash:pytest",
		"find . -name '*.go'":            "bash:find",
		"go test ./... && rm -rf x":      "",
		"go test ./...; rm -rf x":        "",
		"go test ./... | tee log":        "",
		"go test ./... > log":            "",
		"go test < in":                   "",
		"go test $(go list ./...)":       "",
		"go test `go list ./...`":        "",
		"echo $HOME":                     "",
		"go test ./... &":                "",
		"(go test)":                      "",
		"go test \\\n ./...":             "",
		"go test\nrm -rf x":              "",
		`bash -c "go test"`:              "",
		"sh -c 'ls'":                     "",
		"/bin/bash script.sh":            "",
		"env FOO=1 go test":              "",
		"FOO=1 go test":                  "",
		"sudo go test":                   "",
		"xargs rm":                       "",
		"nohup go test":                  "",
		"timeout 5 go test":              "",
		"eval ls":                        "",
		"exec ls":                        "",
		"nice go test":                   "",
		"git -c core.pager=x status":     "",
		"find . -exec rm {} +":           "",
		`echo "unterminated`:             "",
		`echo "$(whoami)"`:               "",
		"":                               "",
	}
	for cmd, want := range cases {
		g := builtin.BashGrant(cmd)
		got := ""
		if g != nil {
			got = g.Key
		}
		if got != want {
			t.Errorf("%q: grant %q, want %q", cmd, got, want)
		}
	}
	// rm's grant is not go test's
	if builtin.BashGrant("rm -rf x").Key == builtin.BashGrant("go test ./...").Key {
		t.Fatal("grants mix")
	}
}

func runBash(t *testing.T, ctx context.Context, opts builtin.Options, args map[string]any) (tool.Result, []string) {
	t.Helper()
	_, env := workspace(t)
	a, err := prepareWith(t, "bash", opts, env, args)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var chunks []string
	r := a.Run(ctx, func(s string) {
		mu.Lock()
		chunks = append(chunks, s)
		mu.Unlock()
	})
	mu.Lock()
	defer mu.Unlock()
	return r, chunks
}

func TestBashRun(t *testing.T) {
	r, chunks := runBash(t, context.Background(), builtin.Options{}, map[string]any{"command": "echo out; echo err >&2; pwd; cat; test -t 0 || echo no-tty"})
	wantStatus(t, r, tool.StatusCompleted)
	wantContains(t, r.Output, "out\n", "err\n", "no-tty\n", "exit status 0")
	if len(r.Content) != 1 || r.Content[0].Type != "terminal" || r.Content[0].Text != r.Output {
		t.Fatalf("content %+v", r.Content)
	}
	if got := strings.Join(chunks, ""); !strings.Contains(got, "out\n") || !strings.Contains(got, "err\n") {
		t.Fatalf("streamed %q", got)
	}

	r, _ = runBash(t, context.Background(), builtin.Options{}, map[string]any{"command": "echo failing; exit 2"})
	wantStatus(t, r, tool.StatusFailed)
	wantContains(t, r.Output, "failing\n", "exit status 2")
}

// The first line reaches the editor while the command still runs: the
// command waits, on a FIFO, for the test to have seen it.
func TestBashStreams(t *testing.T) {
	root, env := workspace(t)
	fifo := filepath.Join(root, "go-on")
	must(t, syscall.Mkfifo(fifo, 0o600))
	a := mustPrepare(t, "bash", env, map[string]any{"command": "echo first; cat go-on >/dev/null; echo second", "timeout": 60})
	var mu sync.Mutex
	var all strings.Builder
	var once sync.Once
	r := a.Run(context.Background(), func(s string) {
		mu.Lock()
		all.WriteString(s)
		seen := strings.Contains(all.String(), "first\n")
		mu.Unlock()
		if seen {
			once.Do(func() {
				f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
				if err == nil {
					f.Close() // the command reads EOF and goes on
				}
			})
		}
	})
	wantStatus(t, r, tool.StatusCompleted) // not killed after 60 s: "first" came while it waited
	mu.Lock()
	defer mu.Unlock()
	if all.String() != "first\nsecond\n" {
		t.Fatalf("streamed %q", all.String())
	}
}

// A command that ignores SIGTERM is killed at its timeout, and nothing of
// it runs when the call has ended. (The timeout leaves bash the time to set
// its trap and start the sleep on a loaded machine: at 0.5 s the TERM could
// come first, and nothing said pid=.)
func TestBashTimeout(t *testing.T) {
	r, _ := runBash(t, context.Background(), builtin.Options{KillGrace: 300 * time.Millisecond, Sandbox: unconfined.Sandbox},
		map[string]any{"command": "trap '' TERM; sleep 1000 & echo pid=$!; wait", "timeout": 2})
	wantStatus(t, r, tool.StatusFailed)
	wantContains(t, r.Output, "pid=", "killed by kin after the timeout", "it had started")
	if pid := pidIn(t, r.Output); alive(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the TERM-ignoring sleep %d outlived the call", pid)
	}
}

// unconfined runs commands without the sandbox: the tests of process
// groups look at host pids, which a PID namespace renumbers (the sandbox's
// own tests are in sandbox_linux_test.go).
var unconfined = builtin.Options{Sandbox: sandbox.New(sandbox.Config{Mode: sandbox.ModeOff})}

// pidIn reads the number after "pid=" in out.
func pidIn(t *testing.T, out string) int {
	t.Helper()
	_, rest, ok := strings.Cut(out, "pid=")
	f := strings.Fields(rest)
	if !ok || len(f) == 0 {
		t.Fatalf("no pid in %q", out)
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil {
		t.Fatalf("pid in %q: %v", out, err)
	}
	return pid
}

// runUntilCancelled runs command (unconfined), cancels it once it printed
// "pid=N", and returns the result and N.
func runUntilCancelled(t *testing.T, command string) (tool.Result, int) {
	t.Helper()
	_, env := workspace(t)
	a, err := prepareWith(t, "bash", unconfined, env, map[string]any{"command": command})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var all strings.Builder
	r := a.Run(ctx, func(s string) {
		mu.Lock()
		defer mu.Unlock()
		all.WriteString(s)
		if _, rest, ok := strings.Cut(all.String(), "pid="); ok && strings.Contains(rest, "\n") {
			cancel()
		}
	})
	return r, pidIn(t, r.Output)
}

func TestBashCancelKillsGroup(t *testing.T) {
	r, pid := runUntilCancelled(t, "sleep 100 & echo pid=$!; wait")
	wantStatus(t, r, tool.StatusFailed)
	wantContains(t, r.Output, "pid=", "killed by kin after the turn was cancelled", "it had started")
	if alive(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("grandchild %d still running after cancel", pid)
	}
}

func TestBashBackgroundLeftoversStopped(t *testing.T) {
	for _, cmd := range []string{
		"sleep 100 & echo pid=$!",                 // holds the output pipe
		"sleep 100 >/dev/null 2>&1 & echo pid=$!", // does not
	} {
		r, _ := runBash(t, context.Background(), unconfined, map[string]any{"command": cmd})
		wantStatus(t, r, tool.StatusCompleted)
		wantContains(t, r.Output, "exit status 0", "left running in the background were stopped")
		if pid := pidIn(t, r.Output); alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s: background %d left running", cmd, pid)
		}
	}
}

func TestBashTruncation(t *testing.T) {
	r, chunks := runBash(t, context.Background(), builtin.Options{}, map[string]any{"command": "seq 1 200000"})
	wantStatus(t, r, tool.StatusOutputLimit)
	if len(r.Output) > tool.MaxOutput {
		t.Fatalf("output %d bytes, over %d", len(r.Output), tool.MaxOutput)
	}
	if !strings.HasPrefix(r.Output, "1\n2\n3\n") {
		t.Fatalf("head lost: %q", r.Output[:20])
	}
	wantContains(t, r.Output, "bytes cut ...]", "199999\n200000\nexit status 0")
	// everything was streamed (1288895 bytes is over the streaming cap,
	// which then says so)
	streamed := strings.Join(chunks, "")
	wantContains(t, streamed, "1\n2\n3\n", "streaming stopped")

	// failing with lots of output: failed wins
	r, _ = runBash(t, context.Background(), builtin.Options{}, map[string]any{"command": "seq 1 100000; exit 3"})
	wantStatus(t, r, tool.StatusFailed)
	wantContains(t, r.Output, "100000\nexit status 3")
}

func TestBashEnvAndShell(t *testing.T) {
	r, _ := runBash(t, context.Background(), builtin.Options{Shell: "/bin/sh", Env: []string{"KIN_TEST=42", "PATH=" + os.Getenv("PATH")}},
		map[string]any{"command": "echo v=$KIN_TEST"})
	wantContains(t, r.Output, "v=42\n")
}

// alive: the process exists and is not a zombie waiting for a reaper.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

func TestBashNeverSeesKinsModelKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-canary-bash")
	t.Setenv("KIN_TEST_VISIBLE", "yes")
	root := t.TempDir()
	tl := builtin.Tools(builtin.Options{})
	var bash tool.Tool
	for _, x := range tl {
		if x.Spec().Name == "bash" {
			bash = x
		}
	}
	act, err := bash.Prepare(context.Background(), tool.Env{Roots: []string{root}}, json.RawMessage(`{"command":"env"}`))
	if err != nil {
		t.Fatal(err)
	}
	res := act.Run(context.Background(), nil)
	if strings.Contains(res.Output, "sk-canary-bash") {
		t.Fatal("the model key reached a command's environment")
	}
	if !strings.Contains(res.Output, "KIN_TEST_VISIBLE=yes") {
		t.Errorf("the rest of the environment is missing:\n%s", res.Output)
	}
}

// The attack: "always allow `git status`" (key bash:git status) answered
// `git' 'status` and `'git status' -x`, which run a program named "git
// status" (one word: from a PATH folder such as ./bin, a file the model can
// write), because the key joins the scope's words with spaces. And a
// "git\u00a0status" card reads as git status while it is another program.
// Such words get no grant: the person is asked each time.
func TestBashGrantKeysAreNotAmbiguous(t *testing.T) {
	for _, cmd := range []string{
		"git' 'status",
		"'git status' --short",
		`"git status"`,
		"git 'status --short'",
		"npm 'run test'",
		"npm run 'test x'",
		"git\u00a0status",
		"git status\u200b",
		"git\u2003status",
		"go te\u0301st",
	} {
		g := builtin.BashGrant(cmd)
		if cmd == "go te\u0301st" {
			// a combining mark is printed: its own key, shown as it is
			if g == nil || g.Key == "bash:go test" {
				t.Errorf("%q: grant %+v", cmd, g)
			}
			continue
		}
		if g != nil {
			t.Errorf("%q: grant %q; a grant key must name one program and subcommand unambiguously", cmd, g.Key)
		}
	}
	if g := builtin.BashGrant("git 'status'"); g == nil || g.Key != "bash:git status" {
		t.Errorf("a quoted word without spaces: %+v", g)
	}
}
