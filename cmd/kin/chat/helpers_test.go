package chat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kin-dev/kin/cmd/kin/chat"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// timeout bounds every wait; nothing here sleeps a fixed time.
const timeout = 20 * time.Second

// env is one test's world (see rpctest.World).
type env struct {
	*rpctest.World
	t testing.TB
	// mute makes the test terminal one that never answers where its
	// cursor is.
	mute bool
	// slow makes it one that answers that much later (over ssh, say).
	slow time.Duration
	// mcp serves the MCP servers of Home's mcp.json, as kin serve does.
	mcp bool
}

func newEnv(t testing.TB) *env { return &env{World: rpctest.NewWorld(t), t: t} }

// httpServer writes Home's mcp.json with one HTTP server, name at url
// (with headers, when there are any).
func (e *env) httpServer(name, url string, headers map[string]string) {
	e.t.Helper()
	srv := map[string]any{"type": "http", "url": url}
	if headers != nil {
		srv["headers"] = headers
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{name: srv}})
	if err := os.WriteFile(filepath.Join(e.Home, "mcp.json"), cfg, 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// connect serves a real kin server on one end of a pipe and returns the
// other end, as `kin serve` would be over stdio.
func (e *env) connect() io.ReadWriteCloser {
	a, b := net.Pipe()
	done := make(chan struct{})
	opts := e.Options()
	if e.mcp {
		opts.MCP = &rpc.MCPOptions{}
	}
	go func() {
		rpc.Serve(context.Background(), a, opts)
		close(done)
	}()
	e.t.Cleanup(func() {
		b.Close()
		select {
		case <-done:
		case <-time.After(timeout):
			e.t.Errorf("the server did not stop")
		}
	})
	return b
}

// session is one run of chat.Run in a goroutine.
type session struct {
	t    testing.TB
	in   *io.PipeWriter
	out  *buffer
	err  *buffer
	intr chan struct{}
	code chan int
	echo bool // interactive: the "terminal" echoes input
}

// run starts chat.Run on conn. interactive decides the mode; the input is
// a pipe the test writes lines to.
func (e *env) run(interactive bool, tweak func(*chat.Options)) *session {
	e.t.Helper()
	return run(e.t, e.connect(), interactive, func(o *chat.Options) {
		o.Cwd = e.WS
		if tweak != nil {
			tweak(o)
		}
	})
}

func run(t testing.TB, conn io.ReadWriteCloser, interactive bool, tweak func(*chat.Options)) *session {
	t.Helper()
	pr, pw := io.Pipe()
	s := &session{t: t, in: pw, out: newBuffer(), err: newBuffer(), intr: make(chan struct{}), code: make(chan int, 1), echo: interactive}
	opts := chat.Options{In: pr, Out: s.out, Err: s.err, Interactive: interactive, Conn: conn, Interrupt: s.intr, Version: "test"}
	if tweak != nil {
		tweak(&opts)
	}
	go func() { s.code <- chat.Run(context.Background(), opts) }()
	t.Cleanup(func() {
		pw.Close()
		if t.Failed() {
			t.Logf("stdout:\n%s\nstderr:\n%s", s.out.String(), s.err.String())
		}
	})
	return s
}

func (s *session) send(line string) {
	s.t.Helper()
	if s.echo {
		// A terminal echoes what is typed, newline included.
		_, _ = s.out.Write([]byte(line + "\n"))
	}
	done := make(chan struct{})
	go func() {
		_, _ = io.WriteString(s.in, line+"\n")
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(timeout):
		s.t.Fatalf("chat did not read %q", line)
	}
}

func (s *session) interrupt() {
	s.t.Helper()
	select {
	case s.intr <- struct{}{}:
	case <-time.After(timeout):
		s.t.Fatal("chat did not take the interrupt")
	}
}

// wait returns the exit code.
func (s *session) wait() int {
	s.t.Helper()
	select {
	case c := <-s.code:
		return c
	case <-time.After(timeout):
		s.t.Fatal("chat did not exit")
		return -1
	}
}

// buffer is a concurrency-safe output that can be awaited.
type buffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func newBuffer() *buffer { return &buffer{changed: make(chan struct{})} }

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.b.Write(p)
	close(b.changed)
	b.changed = make(chan struct{})
	return n, err
}

// next is closed at the next write.
func (b *buffer) next() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.changed
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// waitCount waits until substr occurs at least n times.
func (b *buffer) waitCount(t *testing.T, substr string, n int) string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		b.mu.Lock()
		s, ch := b.b.String(), b.changed
		b.mu.Unlock()
		if strings.Count(s, substr) >= n {
			return s
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %q (x%d) in:\n%s", substr, n, s)
			return ""
		}
	}
}

func (b *buffer) waitFor(t *testing.T, substr string) string {
	t.Helper()
	return b.waitCount(t, substr, 1)
}

func args(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// fileContent reads a file of the workspace; ok is false when it is absent.
func fileContent(t *testing.T, path string) (content string, ok bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	return string(b), true
}
