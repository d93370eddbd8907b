package main_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// passThenInitialize is the sandboxed peer that hands a copy of its socket,
// before connecting it, to a process outside the sandbox (over the abstract
// unix socket to, which a sandbox sharing the host's network reaches), so
// that a process in kin's namespaces holds it too; then it connects to kin
// at addr and sends initialize.
func passThenInitialize(to, addr string) string {
	tcp, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		return "resolve: " + err.Error()
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return "socket: " + err.Error()
	}
	u, err := net.Dial("unix", "@"+to)
	if err != nil {
		return "unix: " + err.Error()
	}
	defer u.Close()
	if _, _, err := u.(*net.UnixConn).WriteMsgUnix([]byte{1}, syscall.UnixRights(fd), nil); err != nil {
		return "passing: " + err.Error()
	}
	if _, err := u.Read(make([]byte, 1)); err != nil { // held outside now
		return "ack: " + err.Error()
	}
	sa := &syscall.SockaddrInet4{Port: tcp.Port}
	copy(sa.Addr[:], tcp.IP.To4())
	if err := syscall.Connect(fd, sa); err != nil {
		return "connect: " + err.Error()
	}
	f := os.NewFile(uintptr(fd), "peer")
	defer f.Close()
	conn, err := net.FileConn(f)
	if err != nil {
		return "fileconn: " + err.Error()
	}
	return initializeOn(conn)
}

// A sandboxed command sharing the host's network reaches abstract unix
// sockets, and could hand a copy of its socket to one of the person's
// daemons (here, this test process: in kin's namespaces, and listed in
// /proc before the sandboxed peer) while it keeps and uses its own. That
// copy does not vouch for it: every holder must be in kin's namespaces.
func TestListenIsNotFooledByACopyOfTheSocketOutside(t *testing.T) {
	confined := confinedSelf(t)
	addr, logs := listenKin(t, t.TempDir(), "127.0.0.1:0")
	if addr == "" {
		t.Fatal("kin serve --listen 127.0.0.1:0 did not start")
	}
	name := fmt.Sprintf("kin-test-pass-%d", os.Getpid())
	ul, err := net.Listen("unix", "@"+name)
	if err != nil {
		t.Fatal(err)
	}
	defer ul.Close()
	go func() {
		c, err := ul.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		oob := make([]byte, syscall.CmsgSpace(4))
		_, oobn, _, _, err := c.(*net.UnixConn).ReadMsgUnix(make([]byte, 1), oob)
		if err != nil {
			return
		}
		msgs, _ := syscall.ParseSocketControlMessage(oob[:oobn])
		for _, m := range msgs {
			fds, _ := syscall.ParseUnixRights(&m)
			for _, fd := range fds {
				// Held until the test ends, so kin sees it.
				t.Cleanup(func() { syscall.Close(fd) })
			}
		}
		_, _ = c.Write([]byte{1})
		_, _ = c.Read(make([]byte, 1)) // until the peer is done
	}()
	cmd := exec.Command(bwrap, confined...)
	cmd.Env = []string{"KIN_TEST_PEER_DIAL=" + addr, "KIN_TEST_PEER_PASS=" + name}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the sandboxed peer: %v %s", err, out)
	}
	if !strings.HasPrefix(string(out), "closed: ") {
		t.Errorf("a sandboxed command's connection, a copy of its socket held outside: %s", out)
	}
	if w := waitLog(logs, "closed a connection unread"); !strings.Contains(w, "not kin's own") {
		t.Errorf("kin's log: %q", w)
	}
}
