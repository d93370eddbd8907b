//go:build linux

// Package peeruid tells whether the other end of a loopback TCP connection
// belongs to the same user. kin's protocol has no authentication, and on a
// shared machine every local user can reach a loopback port: without this,
// another user connecting to kin serve --listen could start turns in the
// person's workspaces, read their sessions, or add an MCP server with a
// command of their own to the person's settings; and one listening on the
// port kin chat --connect names could pose as kin and ask the person for
// secrets through a form. The same goes for a command kin confined with
// network, which runs as the same user but in namespaces of its own
// (holder_linux.go), so the process holding the peer's socket must be in
// kin's own user and pid namespaces too.
package peeruid

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// Supported: Linux tells kin who owns the other end of a loopback
// connection (procNetTCP).
const Supported = true

// ErrNotHeld: the socket at the other end is in the kernel's table but no
// process holds it: closed already, or (seen from a client) not accepted
// yet by the server, which a client may wait for.
var ErrNotHeld = errors.New("the socket at the other end is held by no process (closed, or not accepted yet); its owner is unknown")

// procNetTCP is where the kernel lists this network namespace's TCP
// sockets; a loopback peer is always in kin's own namespace.
var procNetTCP = []string{"/proc/net/tcp", "/proc/net/tcp6"}

// Check lets a loopback connection through only when the socket at its
// other end belongs to the user this process runs as (its effective uid)
// and the process holding it is in this process's own user and pid
// namespaces (sameNamespaces: not a command kin confined). It works on
// either end: kin serve --listen checks who connected, kin chat --connect
// checks who is listening. Whatever cannot be established (no entry, an
// unreadable /proc, a peer already gone, a holder kin cannot find) is
// refused.
func Check(c net.Conn) error {
	us, ok1 := c.LocalAddr().(*net.TCPAddr)
	peer, ok2 := c.RemoteAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return fmt.Errorf("not a TCP connection (%T)", c)
	}
	uid, inode, err := peerUID(procNetTCP, peer, us)
	if err != nil {
		return err
	}
	euid := os.Geteuid()
	if uid != euid {
		return fmt.Errorf("the socket at the other end belongs to uid %d, kin runs as uid %d", uid, euid)
	}
	return sameNamespaces(procRoot, inode, euid)
}

// peerUID finds the peer's own socket, the one whose local end is our
// connection's remote address and whose remote end is our local address
// (our accepted socket is the mirror entry, and is ours), and returns its
// owner and inode. An entry with inode 0 is not a socket a process holds (TIME_WAIT,
// one its owner has closed, or one a listener has not accepted yet); such
// entries may show uid 0, which would pass for root's, so they are skipped
// and, alone, refused with ErrNotHeld.
func peerUID(files []string, peer, us *net.TCPAddr) (uid int, inode uint64, err error) {
	var errs []error
	closed := false
	for _, name := range files {
		uid, inode, found, gone, err := scanProcNet(name, peer, us)
		if found {
			return uid, inode, nil
		}
		closed = closed || gone
		if err != nil {
			errs = append(errs, err)
		}
	}
	if closed {
		return 0, 0, ErrNotHeld
	}
	if len(errs) > 0 {
		return 0, 0, fmt.Errorf("cannot tell whose socket is at the other end: %w", errors.Join(errs...))
	}
	return 0, 0, errors.New("cannot tell whose socket is at the other end: it is not in /proc/net/tcp or tcp6")
}

// scanProcNet looks for the peer's socket in one /proc/net/tcp-format file.
// A file that does not exist (tcp6 without IPv6) is no error: the other
// file may have the entry.
func scanProcNet(name string, peer, us *net.TCPAddr) (uid int, inode uint64, found, gone bool, err error) {
	f, err := os.Open(name)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, 0, false, false, nil
		}
		return 0, 0, false, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header line
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 {
			continue
		}
		if !procAddrIs(fields[1], peer) || !procAddrIs(fields[2], us) {
			continue
		}
		if fields[9] == "0" {
			gone = true
			continue
		}
		n, err := strconv.ParseUint(fields[7], 10, 32)
		if err != nil {
			return 0, 0, false, gone, fmt.Errorf("%s: uid %q: %v", name, fields[7], err)
		}
		ino, err := strconv.ParseUint(fields[9], 10, 64)
		if err != nil {
			return 0, 0, false, gone, fmt.Errorf("%s: inode %q: %v", name, fields[9], err)
		}
		return int(n), ino, true, gone, nil
	}
	return 0, 0, false, gone, sc.Err()
}

// procAddrIs reports whether a /proc/net/tcp address ("0100007F:1F90")
// is a. The kernel prints the address as 32-bit words, each in the
// machine's byte order (%08X of the word), and the port in host order; an
// IPv4 peer on an IPv6 socket is listed in tcp6 IPv4-mapped, which
// net.IP.Equal takes for the IPv4 address.
func procAddrIs(s string, a *net.TCPAddr) bool {
	hexIP, hexPort, ok := strings.Cut(s, ":")
	if !ok || (len(hexIP) != 8 && len(hexIP) != 32) {
		return false
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil || int(port) != a.Port {
		return false
	}
	ip := make(net.IP, len(hexIP)/2)
	for i := 0; i < len(hexIP); i += 8 {
		w, err := strconv.ParseUint(hexIP[i:i+8], 16, 32)
		if err != nil {
			return false
		}
		binary.NativeEndian.PutUint32(ip[i/2:], uint32(w))
	}
	return ip.Equal(a.IP)
}
