package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/agent/modeltest"
)

var kinBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kin-bin-")
	if err != nil {
		panic(err)
	}
	kinBin = filepath.Join(dir, "kin")
	build := exec.Command("go", "build", "-o", kinBin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as README.md installs it
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building kin: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is the built binary running `kin serve` over real pipes.
type proc struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser // the editor's read end of kin's stdout
	out    *bufio.Reader
	stderr *strings.Builder
	home   string
	dir    string // its working directory
}

func startServe(t testing.TB, env ...string) *proc {
	t.Helper()
	return startKin(t, "serve", env...)
}

// startKin runs the built binary as `kin <sub>` over real pipes, in a
// KIN_HOME and a working directory of its own; it is killed when the test
// ends (its stderr logged if the test failed).
func startKin(t testing.TB, sub string, env ...string) *proc {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(kinBin, sub)
	cmd.Dir = t.TempDir()
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "KIN_HOME=" + home}, env...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, stdin: stdin, stdout: stdout, out: bufio.NewReader(stdout), stderr: &stderr, home: home, dir: cmd.Dir}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait() // the stderr copy is done once Wait returns
		if t.Failed() {
			t.Logf("stderr:\n%s", stderr.String())
		}
	})
	return p
}

func (p *proc) send(v any) {
	p.t.Helper()
	if err := (jsonrpc2.VSCodeObjectCodec{}).WriteObject(p.stdin, v); err != nil {
		p.t.Fatal(err)
	}
}

func (p *proc) sendRaw(s string) {
	if _, err := io.WriteString(p.stdin, s); err != nil {
		p.t.Fatal(err)
	}
}

// next reads one frame from stdout; anything that is not a frame fails the
// test (stdout is protocol only).
func (p *proc) next() map[string]any {
	p.t.Helper()
	ch := make(chan map[string]any, 1)
	errc := make(chan error, 1)
	go func() {
		var m map[string]any
		if err := (jsonrpc2.VSCodeObjectCodec{}).ReadObject(p.out, &m); err != nil {
			errc <- err
			return
		}
		ch <- m
	}()
	select {
	case m := <-ch:
		return m
	case err := <-errc:
		p.t.Fatalf("reading a frame from stdout: %v", err)
	case <-time.After(20 * time.Second):
		p.t.Fatal("no frame from kin serve")
	}
	return nil
}

// until reads frames until one matches.
func (p *proc) until(match func(map[string]any) bool) map[string]any {
	p.t.Helper()
	for i := 0; i < 1000; i++ {
		if m := p.next(); match(m) {
			return m
		}
	}
	p.t.Fatal("no matching frame")
	return nil
}

func idIs(id float64) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["id"] == id }
}

func (p *proc) wait() int {
	p.t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(20 * time.Second):
		p.t.Fatal("kin serve did not exit")
	}
	return -1
}

func req(id int, method string, params any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}
}

func TestBinaryTurnOverStdioAndCleanExit(t *testing.T) {
	m := modeltest.New()
	defer m.Close()
	m.Script(modeltest.Reply{Text: []string{"hello ", "from ", "the binary"}})
	p := startServe(t, "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+m.URL())
	p.send(req(1, "initialize", map[string]any{"processId": os.Getpid()}))
	if init := p.until(idIs(1)); init["result"].(map[string]any)["protocolVersion"] != "1" {
		t.Fatalf("initialize: %v", init)
	}
	p.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	p.send(req(2, "session/new", nil))
	sid := p.until(idIs(2))["result"].(map[string]any)["session"].(map[string]any)["sessionId"]
	p.send(req(3, "turn/start", map[string]any{"sessionId": sid, "input": "hi"}))
	var text strings.Builder
	done := p.until(func(m map[string]any) bool {
		if m["method"] == "turn/delta" {
			text.WriteString(m["params"].(map[string]any)["text"].(string))
		}
		return m["method"] == "turn/completed"
	})
	if done["params"].(map[string]any)["status"] != "completed" || text.String() != "hello from the binary" {
		t.Fatalf("turn: %v %q", done, text.String())
	}
	p.send(req(4, "shutdown", nil))
	p.until(idIs(4))
	p.send(map[string]any{"jsonrpc": "2.0", "method": "exit"})
	if code := p.wait(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if strings.Contains(p.stderr.String(), "panic") {
		t.Errorf("stderr: %s", p.stderr.String())
	}
}

func TestBinarySurvivesMalformedFrames(t *testing.T) {
	p := startServe(t)
	p.sendRaw("Content-Length: nope\r\n\r\n")
	if e := p.next(); e["error"].(map[string]any)["code"] != -32600.0 {
		t.Errorf("bad header: %v", e)
	}
	p.sendRaw("Content-Length: 9\r\n\r\n{\"bad\": }")
	if e := p.next(); e["error"].(map[string]any)["code"] != -32700.0 {
		t.Errorf("bad JSON: %v", e)
	}
	p.sendRaw("Content-Length: 2\r\n\r\n{}")
	if e := p.next(); e["error"].(map[string]any)["code"] != -32600.0 {
		t.Errorf("not a request: %v", e)
	}
	// A frame over the cap is skipped as it streams past and answered with
	// its own id, even a negative one.
	head := `{"jsonrpc":"2.0","id":-1,"method":"session/new","params":{"title":"`
	size := 40 << 20
	p.sendRaw(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", size, head))
	p.sendRaw(strings.Repeat("a", size-len(head)-3) + `"}}`)
	if e := p.next(); !strings.Contains(fmt.Sprint(e["error"]), "over the") || e["id"] != -1.0 {
		t.Errorf("huge frame: %v", e)
	}
	// Closing stdin mid-frame ends the process cleanly.
	p.stdin.Close()
	if code := p.wait(); code != 0 {
		t.Errorf("exit code %d after stdin closed", code)
	}
}

func TestBinaryKeepsServingAfterBadFrames(t *testing.T) {
	p := startServe(t)
	p.sendRaw("Content-Length: 3\r\n\r\n]]]")
	p.next()
	p.send(req(1, "initialize", map[string]any{}))
	if r := p.until(idIs(1)); r["result"] == nil {
		t.Fatalf("initialize after a bad frame: %v", r)
	}
	p.send(req(2, "session/list", nil))
	if r := p.until(idIs(2)); r["result"] == nil {
		t.Fatalf("session/list: %v", r)
	}
	p.send(map[string]any{"jsonrpc": "2.0", "method": "exit"})
	if code := p.wait(); code != 1 {
		t.Errorf("exit without shutdown: code %d, want 1", code)
	}
}

func TestListenRefusesNonLoopback(t *testing.T) {
	out, err := exec.Command(kinBin, "serve", "--listen", "0.0.0.0:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "loopback") {
		t.Errorf("got %v: %s", err, out)
	}
}

func TestListenServesOnLoopback(t *testing.T) {
	addr, _ := listenKin(t, t.TempDir(), "127.0.0.1:0")
	conn, err := dialTCP(addr)
	if err != nil {
		t.Fatalf("%v (listening on %q)", err, addr)
	}
	defer conn.Close()
	if err := (jsonrpc2.VSCodeObjectCodec{}).WriteObject(conn, req(1, "initialize", map[string]any{})); err != nil {
		t.Fatal(err)
	}
	var resp map[string]any
	if err := (jsonrpc2.VSCodeObjectCodec{}).ReadObject(bufio.NewReader(conn), &resp); err != nil || resp["result"] == nil {
		t.Fatalf("%v %v", err, resp)
	}
	b, _ := json.Marshal(resp)
	if !strings.Contains(string(b), `"name":"kin"`) {
		t.Errorf("%s", b)
	}
}

// One malformed header, or one wrong Content-Length, costs the frame it is
// on and nothing more: kin starts again at the next frame header.
func TestBinaryResynchronisesAfterBadFraming(t *testing.T) {
	p := startServe(t)
	p.send(req(1, "initialize", map[string]any{}))
	p.until(idIs(1))
	good := func(id int) string {
		b, _ := json.Marshal(req(id, "session/list", map[string]any{}))
		return string(b)
	}
	framed := func(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }
	for i, header := range []string{"Content-Length 60", "Content-Lenght: 60", "Content-Length: -60", "Content-Length: 99999999999999999999999"} {
		id := 10 + i
		p.sendRaw(header + "\r\n\r\n" + good(900+i) + framed(good(id)))
		p.expect(map[any]bool{nil: false, float64(id): true})
	}
	short, long := good(20), good(21)
	p.sendRaw(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(short)-8, short) + framed(good(22)))
	p.expect(map[any]bool{20.0: false, 22.0: true})
	p.sendRaw(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(long)+30, long) + framed(good(23)))
	p.expect(map[any]bool{21.0: false, 23.0: true})
	p.sendRaw(framed(good(24)))
	p.expect(map[any]bool{24.0: true})
}

// expect reads the next len(want) frames, in whatever order kin wrote them
// (answers may come in any), and checks that each id (nil: null) got a
// result (true) or an error (false).
func (p *proc) expect(want map[any]bool) {
	p.t.Helper()
	got := map[any]map[string]any{}
	for range want {
		m := p.next()
		got[m["id"]] = m
	}
	for id, ok := range want {
		m, seen := got[id]
		if !seen || (m["result"] != nil) != ok || (m["error"] != nil) == ok {
			p.t.Fatalf("id %v: want result=%v, got %v (all: %v)", id, ok, m, got)
		}
	}
}

// A header line has a length cap: a 128 MiB line is skipped without being
// kept (it grew kin's memory by its size), and the next frame is answered.
func TestBinaryHugeHeaderLineKeepsMemoryBounded(t *testing.T) {
	p := startServe(t)
	p.send(req(1, "initialize", map[string]any{}))
	p.until(idIs(1))
	chunk := strings.Repeat("x", 1<<20)
	for range 128 {
		p.sendRaw(chunk)
	}
	p.sendRaw("\r\n\r\n")
	p.send(req(2, "session/list", map[string]any{}))
	p.expect(map[any]bool{nil: false, 2.0: true}) // the line refused, the request answered
	if hwm := hwmKB(p.cmd.Process.Pid); hwm > 64<<10 {
		t.Errorf("kin's peak memory reached %.0f MiB reading one header line", hwm/1024)
	}
}

// A web page can post to kin serve --listen's loopback port (a text/plain
// fetch needs no preflight). kin took the HTTP request for a frame and read
// the frames the page put in its body: here initialize and session/new,
// which made a session. The connection is closed unread, and kin goes on
// serving editors.
func TestListenClosesAnHTTPRequestUnread(t *testing.T) {
	home := t.TempDir()
	addr, _ := listenKin(t, home, "127.0.0.1:0")
	framed := func(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }
	body := "{}" + framed(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`) +
		framed(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"title":"from a web page"}}`)
	client := &http.Client{Timeout: 10 * time.Second}
	if resp, err := client.Post("http://"+addr+"/", "text/plain;charset=UTF-8", strings.NewReader(body)); err == nil {
		resp.Body.Close()
		t.Errorf("kin answered an HTTP request: %s", resp.Status)
	}
	// kin is still there for an editor, and made nothing for the page.
	conn, err := dialTCP(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := (jsonrpc2.VSCodeObjectCodec{}).WriteObject(conn, req(1, "initialize", map[string]any{})); err != nil {
		t.Fatal(err)
	}
	var resp map[string]any
	if err := (jsonrpc2.VSCodeObjectCodec{}).ReadObject(bufio.NewReader(conn), &resp); err != nil || resp["result"] == nil {
		t.Fatalf("an editor after the page: %v %v", err, resp)
	}
	if logs, _ := filepath.Glob(filepath.Join(home, "sessions", "*.jsonl")); len(logs) > 0 {
		t.Fatalf("the page's session/new made a session: %v", logs)
	}
}

// listenKin starts `kin serve --listen` on addr as this test's user, with
// home as KIN_HOME and HOME, and returns the address it listens on (""
// when it did not start listening) and its log lines.
func listenKin(t *testing.T, home, addr string) (string, <-chan string) {
	t.Helper()
	cmd := exec.Command(kinBin, "serve", "--listen", addr)
	cmd.Env = []string{"KIN_HOME=" + home, "HOME=" + home}
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 100)
	r := bufio.NewReader(stderr)
	first, _ := r.ReadString('\n')
	go func() {
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- l
		}
	}()
	if !strings.HasPrefix(first, "kin: listening on ") {
		return "", nil
	}
	return strings.TrimSpace(strings.TrimPrefix(first, "kin: listening on ")), lines
}
