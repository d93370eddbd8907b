package connect

import (
	"bytes"
	"io"
	"sync"
	"time"

	"github.com/kin-dev/kin/agent/sandbox"
)

// Confinement runs a stdio server in the command sandbox. Package
// mcp/confine builds it from the entry's "sandbox" field, asking the trust
// boundary for what to hide; this package only applies it.
type Confinement struct {
	Sandbox *sandbox.Sandbox
	Policy  sandbox.Policy
	// Env is set over the server's environment where its own entry does
	// not set the variable: its caches (npm, uv, XDG) in its state folder.
	Env map[string]string
	// Refuse, when set, is why the server must not start at all (the
	// person required a sandbox there is not): spawn fails with it.
	Refuse string
	// Setting names the entry's field, for the hint when the sandbox
	// seems to have refused the server (`"sandbox"` of NAME in FILE).
	Setting string
}

// env is base with c.Env set where configured (the entry's env) does not
// name the variable.
func (c *Confinement) env(base []string, configured map[string]string) []string {
	for k, v := range c.Env {
		if _, ok := configured[k]; ok {
			continue
		}
		base = setEnvVar(base, k, v)
	}
	return base
}

func setEnvVar(env []string, name, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := bytes.Cut([]byte(kv), []byte("=")); string(k) != name {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}

// maxTail is how much of a server's stderr is kept (its end).
const maxTail = 8 << 10

// stderrTail keeps the end of a server's stderr, in memory only.
type stderrTail struct {
	mu   sync.Mutex
	buf  []byte
	done chan struct{} // closed when stderr ended
}

func newStderrTail() *stderrTail { return &stderrTail{done: make(chan struct{})} }

func (t *stderrTail) drain(r io.ReadCloser) {
	defer close(t.done)
	defer r.Close()
	b := make([]byte, 4<<10)
	for {
		n, err := r.Read(b)
		if n > 0 {
			t.mu.Lock()
			t.buf = append(t.buf, b[:n]...)
			if len(t.buf) > maxTail {
				t.buf = append([]byte(nil), t.buf[len(t.buf)-maxTail:]...)
			}
			t.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// refusals are what a program says when the operating system refused it a
// path or a connection: the signs of a sandbox in the way.
var refusals = [][]byte{
	[]byte("EACCES"), []byte("EPERM"), []byte("EROFS"), []byte("ECONNREFUSED"),
	[]byte("permission denied"), []byte("operation not permitted"),
	[]byte("read-only file system"), []byte("connection refused"),
}

// refused reports whether the tail holds a sign of a refusal, waiting a
// moment for the rest of a server that just ended. Only a failed server is
// asked, so the wait is paid on failures alone; a second, because on a
// busy machine a dead server's last words can take longer than a fifth of
// one to be read, and without them the hint would be missing.
func (t *stderrTail) refused() bool {
	if t == nil {
		return false
	}
	select {
	case <-t.done:
	case <-time.After(time.Second):
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	low := bytes.ToLower(t.buf)
	for _, r := range refusals {
		if bytes.Contains(low, bytes.ToLower(r)) {
			return true
		}
	}
	return false
}

// SandboxHint is what a failure of a confined server adds to its status
// when its stderr says the system refused it something ("" otherwise).
// It names the setting, never what the server wrote.
func (p *process) SandboxHint(conf *Confinement) string {
	if p == nil || !p.confined || conf == nil || !p.tail.refused() {
		return ""
	}
	return sandboxHint(conf)
}

func sandboxHint(conf *Confinement) string {
	return "; it runs in kin's sandbox and its errors say it was refused a path or a connection " +
		"(EACCES/EPERM, a refused connection): if it needs more, widen " + conf.Setting +
		` ({"write": ["..."]} or "network": true, or "off")`
}

// SandboxHint is the same for a connection that ended: "" unless the
// server was confined and its stderr says it was refused something.
func (c *Conn) SandboxHint() string {
	if c.proc == nil || c.conf == nil || !c.proc.confined || !c.proc.tail.refused() {
		return ""
	}
	return sandboxHint(c.conf)
}
