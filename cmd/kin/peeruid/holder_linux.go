//go:build linux

package peeruid

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// ErrNoHolder: the peer's socket is in the kernel's table, but no process
// of this user whose descriptors kin can read holds it. Either the socket
// is held by a process kin may not look into (bubblewrap makes its own
// processes non-dumpable), or the holder is mid-accept or gone (a race);
// either way the peer is not established, so it is refused. It wraps
// ErrNotHeld so a client waiting for the server's accept keeps waiting.
var ErrNoHolder = fmt.Errorf("no process of this user whose descriptors kin can read holds the socket at the other end (a sandboxed or exiting process): %w", ErrNotHeld)

// procRoot is where sameNamespaces looks for processes.
const procRoot = "/proc"

// sameNamespaces lets the peer through only when the processes holding its
// socket are in kin's own user and pid namespaces. A command kin confines
// with network (bubblewrap --share-net, confined MCP servers) runs as the
// same uid, so the uid check lets it through; bubblewrap always gives it a
// pid namespace of its own (--unshare-all), and a user namespace where the
// system allows it. Without this it could drive the kin that confined it:
// add an MCP server whose command runs outside any sandbox, say.
//
// Every holder kin can see must be in kin's namespaces, not just the first
// found: a sandboxed command sharing the host's network reaches abstract
// unix sockets, and could hand a copy of its socket (SCM_RIGHTS) to one of
// the person's daemons, found earlier in /proc, while it keeps its own.
func sameNamespaces(root string, inode uint64, uid int) error {
	ourUser, err1 := os.Readlink(filepath.Join(root, "self", "ns", "user"))
	ourPid, err2 := os.Readlink(filepath.Join(root, "self", "ns", "pid"))
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("cannot read kin's own namespaces: %w", err)
	}
	d, err := os.Open(root)
	if err != nil {
		return fmt.Errorf("cannot tell who holds the socket at the other end: %w", err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return fmt.Errorf("cannot tell who holds the socket at the other end: %w", err)
	}
	want := "socket:[" + strconv.FormatUint(inode, 10) + "]"
	held := false
	for _, name := range names {
		p, err := strconv.Atoi(name)
		if err != nil || p <= 0 {
			continue
		}
		found, user, pidNS, err := holderIn(filepath.Join(root, name), want, uid)
		switch {
		case !found:
			continue
		case err != nil:
			return fmt.Errorf("cannot read the namespaces of process %d, which holds the socket at the other end: %w", p, err)
		case user != ourUser || pidNS != ourPid:
			return fmt.Errorf("the socket at the other end is held by process %d in namespaces %s %s, not kin's own (%s %s): a sandboxed command", p, user, pidNS, ourUser, ourPid)
		}
		held = true
	}
	if !held {
		return ErrNoHolder
	}
	return nil
}

// holderIn tells whether the process at dir (a /proc/<pid>) is uid's and
// holds want, and if so its namespaces. Only processes owned by uid are
// looked into: another user's cannot be let through anyway, and skipping
// them keeps the scan to this user's processes. The process is read
// through a descriptor of its /proc directory, which stays with it: if it
// exits and its pid is reused meanwhile, the reads fail instead of
// describing the newcomer. Descriptors kin may not read are skipped: a
// holder among them is not found, and with no other one, refused.
func holderIn(dir, want string, uid int) (found bool, user, pidNS string, err error) {
	pd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, "", "", nil
	}
	defer unix.Close(pd)
	var st unix.Stat_t
	if unix.Fstat(pd, &st) != nil || int(st.Uid) != uid || !holds(pd, want) {
		return false, "", "", nil
	}
	user, err1 := readlinkat(pd, "ns/user")
	pidNS, err2 := readlinkat(pd, "ns/pid")
	return true, user, pidNS, errors.Join(err1, err2)
}

// holds reports whether the process whose /proc directory is pd has a
// descriptor linking to want. An unreadable fd directory (a non-dumpable
// process, one gone) holds nothing kin can see.
func holds(pd int, want string) bool {
	fdd, err := unix.Openat(pd, "fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	d := os.NewFile(uintptr(fdd), "fd")
	defer d.Close()
	for {
		fds, err := d.Readdirnames(64)
		for _, fd := range fds {
			if l, err := readlinkat(fdd, fd); err == nil && l == want {
				return true
			}
		}
		if err != nil {
			return false
		}
	}
}

func readlinkat(dir int, name string) (string, error) {
	buf := make([]byte, 128)
	n, err := unix.Readlinkat(dir, name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}
