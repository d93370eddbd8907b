package main_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// The test binary doubles as the peer another user runs: with
// KIN_TEST_PEER_DIAL set it connects there, sends initialize, and prints
// what came back (before TestMain builds anything).
// With KIN_TEST_PEER_LISTEN set it is the other user's server instead: it
// listens on a loopback port, says which, and swallows what it is sent.
func init() {
	if os.Getenv("KIN_TEST_PEER_LISTEN") != "" {
		squatLoopback()
	}
	addr := os.Getenv("KIN_TEST_PEER_DIAL")
	if addr == "" {
		return
	}
	if to := os.Getenv("KIN_TEST_PEER_PASS"); to != "" {
		fmt.Print(passThenInitialize(to, addr))
		os.Exit(0)
	}
	fmt.Print(dialAndInitialize(addr))
	os.Exit(0)
}

func squatLoopback() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(1)
		}
		go io.Copy(io.Discard, c)
	}
}

// dialAndInitialize says "answered", "closed: why" or "open, no answer".
func dialAndInitialize(addr string) string {
	conn, err := dialTCP(addr)
	if err != nil {
		return "dial: " + err.Error()
	}
	return initializeOn(conn)
}

// initializeOn sends initialize on conn and says what came back, as
// dialAndInitialize does; it closes conn.
func initializeOn(conn net.Conn) string {
	defer conn.Close()
	// long enough for a loaded machine: every outcome but "open, no
	// answer" ends the wait early, and no test expects that one
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if err := (jsonrpc2.VSCodeObjectCodec{}).WriteObject(conn, req(1, "initialize", map[string]any{})); err != nil {
		return "closed: writing: " + err.Error()
	}
	var resp map[string]any
	err := (jsonrpc2.VSCodeObjectCodec{}).ReadObject(bufio.NewReader(conn), &resp)
	switch {
	case err == nil:
		return fmt.Sprintf("answered: %v", resp)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "open, no answer"
	default:
		return "closed: " + err.Error()
	}
}

// On a shared machine every local user can reach a loopback port, and the
// protocol has no authentication: another user could start turns in the
// person's workspaces or add an MCP server running their own command to
// the person's settings. kin serve --listen closes a connection whose
// socket another user owns before reading a byte, and serves its own
// user's. The other user is uid 65534, so the test runs as root.
func TestListenClosesAnotherUsersConnectionUnread(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to connect as another user (uid 65534)")
	}
	peer := peerBinary(t)
	for _, listen := range []string{"127.0.0.1:0", "[::1]:0"} {
		addr, logs := listenKin(t, t.TempDir(), listen)
		if addr == "" {
			t.Logf("%s: kin could not listen there (no IPv6?); skipped", listen)
			continue
		}
		cmd := exec.Command(peer)
		cmd.Dir = "/"
		cmd.Env = []string{"KIN_TEST_PEER_DIAL=" + addr}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: the other user's peer: %v %s", listen, err, out)
		}
		if !strings.HasPrefix(string(out), "closed: ") {
			t.Errorf("%s: another user's connection: %s", listen, out)
		}
		if w := waitLog(logs, "closed a connection unread"); !strings.Contains(w, "uid 65534") {
			t.Errorf("%s: kin's log: %q", listen, w)
		}
		// This user is served.
		if got := dialAndInitialize(addr); !strings.HasPrefix(got, "answered: ") || !strings.Contains(got, "name:kin") {
			t.Errorf("%s: own user's connection: %s", listen, got)
		}
	}
}

// peerBinary copies the test binary where uid 65534 can run it (go test's
// own directories are 0700).
func peerBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "kin-peer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst := filepath.Join(dir, "peer")
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, src); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// waitLog returns the first log line containing s, or "" after 30 s.
func waitLog(lines <-chan string, s string) string {
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return ""
			}
			if strings.Contains(l, s) {
				return l
			}
		case <-timeout:
			return ""
		}
	}
}

// kin chat --connect to a port another user listens on (kin serve not
// started yet, or stopped, and the port taken) refuses it before sending a
// byte: such a server could pose as kin and ask the person, through a form,
// for what they would only tell kin. Without the check kin chat would wait
// on that server's answer to initialize.
func TestConnectRefusesAnotherUsersServer(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to listen as another user (uid 65534)")
	}
	squatter := exec.Command(peerBinary(t))
	squatter.Dir = "/"
	squatter.Env = []string{"KIN_TEST_PEER_LISTEN=1"}
	squatter.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	chatRefuses(t, squatter, "another user's", "uid 65534")
}

// chatRefuses starts squatter (a test binary in KIN_TEST_PEER_LISTEN mode,
// which prints the loopback address it listens on) and runs kin chat
// --connect to it: kin chat must refuse the server before waiting on any
// answer of it, naming why (want). whose names the squatter in failures.
func chatRefuses(t *testing.T, squatter *exec.Cmd, whose string, want string) {
	t.Helper()
	out, _ := squatter.StdoutPipe()
	if err := squatter.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = squatter.Process.Kill(); _ = squatter.Wait() })
	addr, _ := bufio.NewReader(out).ReadString('\n')
	addr = strings.TrimSpace(addr)

	home := t.TempDir()
	chat := exec.Command(kinBin, "chat", "--connect", addr)
	chat.Dir = home
	chat.Env = []string{"KIN_HOME=" + home, "HOME=" + home, "OPENAI_API_KEY=k"}
	chat.Stdin = strings.NewReader("hello\n")
	done := make(chan []byte, 1)
	go func() { b, _ := chat.CombinedOutput(); done <- b }()
	select {
	case b := <-done:
		if chat.ProcessState.Success() || !strings.Contains(string(b), "not served by your own kin") || !strings.Contains(string(b), want) {
			t.Errorf("kin chat --connect to %s server: %v\n%s", whose, chat.ProcessState, b)
		}
	case <-time.After(20 * time.Second):
		_ = chat.Process.Kill()
		<-done
		t.Fatalf("kin chat --connect talked to %s server (it waited on its answer)", whose)
	}
}
