package confine_test

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/mcp/mcptest"
)

// A server that runs from a folder in the system's temp folder (a
// repository cloned to /tmp, its node_modules/.bin link) sees that folder,
// read-only: the package its link points into and its files; every other
// folder of the temp folder stays out of its sight, as the private /tmp
// of the sandbox keeps it.
func TestServerRunningFromTheTempFolderSeesItsOwnFolder(t *testing.T) {
	w := newWorld(t)
	pkg, err := os.MkdirTemp("", "kin-confine-pkg-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(pkg) })
	other, err := os.MkdirTemp("", "kin-confine-other-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(other) })
	must(t, os.MkdirAll(filepath.Join(pkg, "node_modules", ".bin"), 0o700))
	must(t, os.MkdirAll(filepath.Join(pkg, "node_modules", "srv", "lib"), 0o700))
	must(t, os.WriteFile(filepath.Join(pkg, "node_modules", "srv", "lib", "data.txt"), []byte("package-data"), 0o600))
	must(t, os.WriteFile(filepath.Join(other, "secret.txt"), []byte("another-programs-file"), 0o600))
	// The server binary inside the package, started through a .bin link.
	srv := mcptest.Stdio(t, "files", nil)
	exe := filepath.Join(pkg, "node_modules", "srv", "server")
	copyFile(t, srv.Command, exe)
	link := filepath.Join(pkg, "node_modules", ".bin", "server")
	must(t, os.Symlink("../srv/server", link))
	srv.Command = link

	c, _, err := w.dial(t, srv)
	if err != nil {
		t.Fatal(err)
	}
	if got := call(t, c, "read", map[string]any{"path": filepath.Join(pkg, "node_modules", "srv", "lib", "data.txt")}); got != "read: package-data" {
		t.Errorf("its own package's file: %s", got)
	}
	if got := call(t, c, "read", map[string]any{"path": filepath.Join(other, "secret.txt")}); !strings.HasPrefix(got, "error:") {
		t.Errorf("another folder of the temp folder was readable: %s", got)
	}
	if got := call(t, c, "write", map[string]any{"path": filepath.Join(pkg, "planted"), "text": "x"}); !strings.HasPrefix(got, "error:") {
		t.Errorf("its own folder was writable: %s", got)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	must(t, err)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o700)
	must(t, err)
	_, err = io.Copy(out, in)
	must(t, err)
	must(t, out.Close())
}

// The same for the script an interpreter runs: `SERVER /tmp/x/script`
// shows /tmp/x (the test's server reads its argument's folder here), and
// an argument never uncovers a hidden folder.
func TestAScriptInTheTempFolderIsSeenAndHiddenFoldersStayHidden(t *testing.T) {
	w := newWorld(t)
	pkg, err := os.MkdirTemp("", "kin-confine-script-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(pkg) })
	script := filepath.Join(pkg, "server.mjs")
	must(t, os.WriteFile(script, []byte("// the script"), 0o600))
	srv := mcptest.Stdio(t, "files", nil)
	srv.Args = []string{"--flag", script, filepath.Join(w.home, "mcp.json")}
	c, plan, err := w.dial(t, srv)
	if err != nil {
		t.Fatal(err)
	}
	if got := call(t, c, "read", map[string]any{"path": script}); got != "read: // the script" {
		t.Errorf("the script named by an argument: %s", got)
	}
	if got := call(t, c, "read", map[string]any{"path": filepath.Join(w.home, "mcp.json")}); !strings.HasPrefix(got, "error:") {
		t.Errorf("an argument uncovered kin's home: %s", got)
	}
	for _, ro := range plan.Confine.Policy.ReadOnly {
		if strings.HasPrefix(ro, w.home) {
			t.Errorf("kin's home is in the read-only list: %v", plan.Confine.Policy.ReadOnly)
		}
	}
}

// Attack: a project's entry names a socket of the temp folder in its
// arguments: "${SSH_AUTH_SOCK}" (/tmp/ssh-XXXX/agent.N, the person's
// ssh-agent), "/tmp/tmux-1000/default" (their terminal sessions: tmux
// send-keys runs anything outside the sandbox), "/tmp/.X11-unix/X0". The
// private temp folder keeps those out of reach; an argument must not
// bring them back. Only a script (a regular file) an argument names shows
// its folder.
func TestAnArgumentNeverShowsASocketOfTheTempFolder(t *testing.T) {
	w := newWorld(t)
	dir, err := os.MkdirTemp("", "kin-confine-ssh-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "agent.1")
	l, err := net.Listen("unix", sock)
	must(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	for _, arg := range []string{sock, dir} {
		srv := mcptest.Stdio(t, "files", nil)
		srv.Args = []string{arg}
		c, plan, err := w.dial(t, srv)
		if err != nil {
			t.Fatal(err)
		}
		if got := call(t, c, "connect", map[string]any{"path": sock}); !strings.HasPrefix(got, "error:") {
			t.Errorf("argument %s: the server reached a socket of the temp folder: %s (read-only: %v)", arg, got, plan.Confine.Policy.ReadOnly)
		}
	}
}
