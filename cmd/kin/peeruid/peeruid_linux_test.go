//go:build linux

package peeruid

import (
	"encoding/binary"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const procHeader = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"

// Lines as the kernel writes them on a little-endian machine, for a peer at
// 127.0.0.1:54321 (D431) connected to kin at 127.0.0.1:8080 (1F90).
const (
	ourSocket  = "   0: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 111 1 0000000000000000 20 4 30 10 -1\n"
	peerTW     = "   1: 0100007F:D431 0100007F:1F90 06 00000000:00000000 03:00001770 00000000     0        0 0 3 0000000000000000\n"
	peerSocket = "   2: 0100007F:D431 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 222 1 0000000000000000 20 4 30 10 -1\n"
	// The same peer on an IPv6 socket, IPv4-mapped, in tcp6; and one on ::1.
	peerMapped = "   0: 0000000000000000FFFF00000100007F:D431 0000000000000000FFFF00000100007F:1F90 01 00000000:00000000 00:00000000 00000000  1001        0 333 1 0000000000000000 20 4 30 10 -1\n"
	peerV6     = "   1: 00000000000000000000000001000000:D431 00000000000000000000000001000000:1F90 01 00000000:00000000 00:00000000 00000000  1002        0 444 1 0000000000000000 20 4 30 10 -1\n"
)

func procFiles(t *testing.T, tcp, tcp6 string) []string {
	t.Helper()
	dir := t.TempDir()
	files := []string{filepath.Join(dir, "tcp"), filepath.Join(dir, "tcp6")}
	for i, body := range []string{tcp, tcp6} {
		if body == "-" { // absent, as tcp6 is without IPv6
			continue
		}
		if err := os.WriteFile(files[i], []byte(procHeader+body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

func TestPeerUIDReadsTheKernelsTables(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the fixtures are a little-endian kernel's; TestCheckPeerOnRealSockets covers this machine")
	}
	v4 := func(port int) *net.TCPAddr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port} }
	v6 := func(port int) *net.TCPAddr { return &net.TCPAddr{IP: net.IPv6loopback, Port: port} }
	peer, us := v4(54321), v4(8080)
	for _, c := range []struct {
		name, tcp, tcp6 string
		peer, us        *net.TCPAddr
		uid             int
		err             string
	}{
		// Our own accepted socket is the mirror entry and is never taken
		// for the peer's; a TIME_WAIT entry's uid 0 is nobody's.
		{name: "the peer's socket", tcp: ourSocket + peerTW + peerSocket, tcp6: "", peer: peer, us: us, uid: 1000},
		{name: "only ours", tcp: ourSocket, tcp6: "", peer: peer, us: us, err: "not in /proc"},
		{name: "only TIME_WAIT", tcp: ourSocket + peerTW, tcp6: "", peer: peer, us: us, err: "held by no process"},
		{name: "another port", tcp: peerSocket, tcp6: "", peer: v4(54322), us: us, err: "not in /proc"},
		{name: "IPv4-mapped in tcp6", tcp: ourSocket, tcp6: peerMapped, peer: peer, us: us, uid: 1001},
		{name: "::1", tcp: "", tcp6: peerV6, peer: v6(54321), us: v6(8080), uid: 1002},
		{name: "no tcp6 file", tcp: peerSocket, tcp6: "-", peer: peer, us: us, uid: 1000},
		{name: "::1 is not 127.0.0.1", tcp: "", tcp6: peerV6, peer: peer, us: us, err: "not in /proc"},
	} {
		uid, _, err := peerUID(procFiles(t, c.tcp, c.tcp6), c.peer, c.us)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: got uid %d, %v; want an error with %q", c.name, uid, err, c.err)
			}
		} else if err != nil || uid != c.uid {
			t.Errorf("%s: got uid %d, %v; want %d", c.name, uid, err, c.uid)
		}
	}
	if _, inode, err := peerUID(procFiles(t, ourSocket+peerSocket, ""), peer, us); err != nil || inode != 222 {
		t.Errorf("the peer's inode: %d, %v; want 222 (not ours, 111)", inode, err)
	}
	// Unreadable tables refuse.
	if _, _, err := peerUID([]string{t.TempDir(), filepath.Join(t.TempDir(), "none")}, peer, us); err == nil || !strings.Contains(err.Error(), "cannot tell") {
		t.Errorf("unreadable /proc: %v", err)
	}
}

// On this machine's kernel, a connection from this process's user passes,
// for IPv4, IPv6 and an IPv6 socket connecting to an IPv4 address.
func TestCheckPeerOnRealSockets(t *testing.T) {
	for _, c := range []struct{ name, listen string }{{"IPv4", "127.0.0.1:0"}, {"IPv6", "[::1]:0"}, {"IPv4-mapped", "127.0.0.1:0"}} {
		ln, err := net.Listen("tcp", c.listen)
		if err != nil {
			t.Logf("%s: %v (skipped)", c.name, err)
			continue
		}
		defer ln.Close()
		var dialed net.Conn
		if c.name == "IPv4-mapped" {
			dialed, err = dialMapped(ln.Addr().(*net.TCPAddr))
		} else {
			dialed, err = net.Dial("tcp", ln.Addr().String())
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		defer dialed.Close()
		// Until the server accepts, its socket is held by no process: the
		// table's uid for it is not to be trusted.
		if err := Check(dialed); !errors.Is(err, ErrNotHeld) {
			t.Errorf("%s: before accept: %v, want ErrNotHeld", c.name, err)
		}
		accepted, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer accepted.Close()
		if err := Check(accepted); err != nil {
			t.Errorf("%s: own user's connection refused: %v", c.name, err)
		}
		// The client's side (kin chat --connect): its peer is the server's
		// accepted socket, this user's too.
		if err := Check(dialed); err != nil {
			t.Errorf("%s: the mirror entry: %v", c.name, err)
		}
	}
}

// dialMapped connects an AF_INET6 socket to an IPv4 address, which the
// kernel lists in tcp6 as ::ffff:a.b.c.d (Go's Dial would use AF_INET).
func dialMapped(a *net.TCPAddr) (net.Conn, error) {
	fd, err := syscall.Socket(syscall.AF_INET6, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	sa := &syscall.SockaddrInet6{Port: a.Port}
	copy(sa.Addr[:], a.IP.To16())
	if err := syscall.Connect(fd, sa); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "mapped")
	defer f.Close()
	return net.FileConn(f)
}
