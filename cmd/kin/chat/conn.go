package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/cmd/kin/peeruid"
	"github.com/kin-dev/kin/rpc"
)

// connOpts are the client connection's options: jsonrpc2's own log lines go
// to Err only with --rpc, and --rpc and Trace see every message masked
// (Trace as kin serve writes its own, rpc.TraceOpts; kin chat holds no
// file contents to hide).
func connOpts(o Options) []jsonrpc2.ConnOpt {
	logw := io.Discard
	if o.RPC {
		logw = o.Err
	}
	opts := []jsonrpc2.ConnOpt{jsonrpc2.SetLogger(log.New(logw, "kin chat: ", 0))}
	if o.Trace != nil {
		opts = append(opts, rpc.TraceOpts(o.Trace, func(*jsonrpc2.Request) bool { return false })...)
	}
	if !o.RPC {
		return opts
	}
	var mu sync.Mutex
	show := func(arrow string, req *jsonrpc2.Request, resp *jsonrpc2.Response) {
		var msg any = req
		if resp != nil {
			msg = resp
		}
		b, err := json.Marshal(msg)
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(o.Err, "%s %s\n", arrow, escapeControls(rpc.MaskSecrets(b)))
	}
	return append(opts,
		jsonrpc2.OnRecv(func(req *jsonrpc2.Request, resp *jsonrpc2.Response) { show("<--", req, resp) }),
		jsonrpc2.OnSend(func(req *jsonrpc2.Request, resp *jsonrpc2.Response) { show("-->", req, resp) }),
	)
}

// Dial connects to `kin serve --listen` on a loopback address. The protocol
// has no authentication, so nothing else is accepted; and on Linux only a
// server run by the same user in kin chat's own user and pid namespaces is
// (peeruid): on a shared machine another user listening on that port (kin
// not started yet, or stopped) could pose as kin and ask, through a form,
// for what the person would only tell kin; so could a command kin confined
// with network (bubblewrap --share-net), which runs as the person.
func Dial(addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if host != "localhost" {
		ip := net.ParseIP(host)
		if ip == nil || !ip.IsLoopback() {
			return nil, errors.New("only loopback addresses are allowed (127.0.0.1, ::1 or localhost)")
		}
	}
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	if err := serverIsOurs(conn, 5*time.Second); err != nil {
		conn.Close()
		return nil, fmt.Errorf("not served by your own kin: %w", err)
	}
	return conn, nil
}

// serverIsOurs checks who holds the server's end of conn, waiting up to
// wait for the server to accept it (until then the kernel's table cannot
// say, and between accept and the descriptor's installation no process is
// seen holding it: peeruid.ErrNoHolder wraps ErrNotHeld). Where the system cannot tell, kin serve --listen itself refused to
// start without --any-local-user, so the port is taken as the person left
// it.
func serverIsOurs(conn net.Conn, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := peeruid.Check(conn)
		switch {
		case err == nil, errors.Is(err, errors.ErrUnsupported):
			return nil
		case !errors.Is(err, peeruid.ErrNotHeld) || time.Now().After(deadline):
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// SpawnCommand returns a Spawn that starts exe with args (kin chat uses its
// own binary and "serve") and talks over its stdin and stdout. The service
// runs in its own process group, so the Ctrl-C typed at the terminal reaches
// kin chat (which cancels the turn) and not the service. Closing the
// connection closes the service's stdin, which shuts it down; it is killed
// if it has not exited 5 seconds later.
func SpawnCommand(exe string, args ...string) func(ctx context.Context) (io.ReadWriteCloser, error) {
	return func(ctx context.Context) (io.ReadWriteCloser, error) {
		inR, inW, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		outR, outW, err := os.Pipe()
		if err != nil {
			inR.Close()
			inW.Close()
			return nil, err
		}
		errR, errW, err := os.Pipe()
		if err != nil {
			inR.Close()
			inW.Close()
			outR.Close()
			outW.Close()
			return nil, err
		}
		cmd := exec.Command(exe, args...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
		ownProcessGroup(cmd)
		err = cmd.Start()
		inR.Close()
		outW.Close()
		errW.Close()
		if err != nil {
			inW.Close()
			outR.Close()
			errR.Close()
			return nil, err
		}
		p := &process{cmd: cmd, stdin: inW, stdout: outR, done: make(chan struct{}), tail: &tail{max: 8 << 10}}
		go func() {
			_, _ = io.Copy(p.tail, errR)
			errR.Close()
		}()
		go func() {
			_ = cmd.Wait()
			close(p.done)
		}()
		return p, nil
	}
}

// process is a spawned service as a connection.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	done   chan struct{}
	tail   *tail
	once   sync.Once
}

func (p *process) Read(b []byte) (int, error)  { return p.stdout.Read(b) }
func (p *process) Write(b []byte) (int, error) { return p.stdin.Write(b) }

func (p *process) Close() error {
	p.once.Do(func() {
		p.stdin.Close()
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		p.stdout.Close()
	})
	return nil
}

// Stderr is the end of what the service wrote to stderr, shown when it
// stops unexpectedly.
func (p *process) Stderr() string { return p.tail.String() }

// tail keeps the last max bytes written to it.
type tail struct {
	max int

	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// escapeControls writes, in a JSON message for the terminal, what clean
// would not print as it is (DEL, C1 controls, which xterm acts on: U+009B
// is CSI, U+009D OSC; bidirectional overrides) and bytes that are not
// UTF-8 as \u escapes: JSON escapes only C0 controls, and the messages
// hold the model's words. Outside strings a message is ASCII, so this is
// the same JSON.
func escapeControls(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if unsafeRune(r) || (r == utf8.RuneError && n == 1) {
			if out == nil {
				out = append(make([]byte, 0, len(b)+16), b[:i]...)
			}
			if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
				// beyond U+FFFF (tag characters): a surrogate pair, as
				// JSON writes it; "\ue0041" would read as U+E004 and "1"
				out = fmt.Appendf(out, "\\u%04x\\u%04x", r1, r2)
			} else {
				out = fmt.Appendf(out, "\\u%04x", r)
			}
		} else if out != nil {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	if out == nil {
		return b
	}
	return out
}
