//go:build linux

package peeruid

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeProc builds a /proc-like tree: self's namespaces and, per pid, its
// descriptors' link targets and its namespaces (both owned by this test's
// user unless chowned).
func fakeProc(t *testing.T, procs map[string][]string) string {
	t.Helper()
	root := t.TempDir()
	link := func(target string, elem ...string) {
		p := filepath.Join(append([]string{root}, elem...)...)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	link("user:[1]", "self", "ns", "user")
	link("pid:[2]", "self", "ns", "pid")
	for pid, p := range procs {
		// p: user ns, pid ns, then the descriptors' targets.
		link(p[0], pid, "ns", "user")
		link(p[1], pid, "ns", "pid")
		if err := os.MkdirAll(filepath.Join(root, pid, "fd"), 0o755); err != nil {
			t.Fatal(err)
		}
		for i, target := range p[2:] {
			link(target, pid, "fd", string(rune('0'+i)))
		}
	}
	return root
}

func TestSameNamespaces(t *testing.T) {
	uid := os.Geteuid()
	for _, c := range []struct {
		name  string
		procs map[string][]string
		err   string // "" accepts
	}{
		{name: "kin's own namespaces", procs: map[string][]string{
			"10": {"user:[1]", "pid:[2]", "pipe:[9]"},
			"20": {"user:[1]", "pid:[2]", "/dev/null", "socket:[2220]", "socket:[222]"},
		}},
		// bubblewrap --unshare-all --share-net: pid namespace of its own,
		// user namespace too where the system allows one.
		{name: "another pid namespace", procs: map[string][]string{
			"30": {"user:[1]", "pid:[7]", "socket:[222]"},
		}, err: "not kin's own"},
		{name: "another user namespace", procs: map[string][]string{
			"30": {"user:[6]", "pid:[2]", "socket:[222]"},
		}, err: "not kin's own"},
		{name: "held by nobody kin can see", procs: map[string][]string{
			"10": {"user:[1]", "pid:[2]", "socket:[22]", "socket:[2222]"},
		}, err: "no process of this user"},
		// self is not a pid: kin's own entries are not read as a holder's.
		{name: "only self", procs: map[string][]string{}, err: "no process of this user"},
	} {
		err := sameNamespaces(fakeProc(t, c.procs), 222, uid)
		if c.err == "" && err != nil {
			t.Errorf("%s: refused: %v", c.name, err)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %v; want an error with %q", c.name, err, c.err)
		}
	}
	// A holder not found is, to a client waiting on the server's accept,
	// not held yet.
	if err := sameNamespaces(fakeProc(t, nil), 222, uid); !errors.Is(err, ErrNotHeld) || !errors.Is(err, ErrNoHolder) {
		t.Errorf("no holder: %v", err)
	}
	// The sandboxed command handed a copy of its socket to one of the
	// person's daemons (SCM_RIGHTS over an abstract unix socket) and kept
	// its own: the daemon's copy, however early in /proc's order, does not
	// vouch for it.
	root := fakeProc(t, map[string][]string{
		"10": {"user:[1]", "pid:[2]", "socket:[222]"},
		"30": {"user:[1]", "pid:[2]", "socket:[222]"},
	})
	d, err := os.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	last := ""
	for _, n := range names {
		if n != "self" {
			last = n
		}
	}
	for _, ns := range []string{"user", "pid"} {
		l := filepath.Join(root, last, "ns", ns)
		if err := os.Remove(l); err != nil || os.Symlink(ns+":[99]", l) != nil {
			t.Fatal(err)
		}
	}
	if err := sameNamespaces(root, 222, uid); err == nil || !strings.Contains(err.Error(), "held by process "+last+" in namespaces user:[99] pid:[99], not kin's own") {
		t.Errorf("a copy in kin's namespaces listed first, the original outside: %v", err)
	}
	// A holder without readable namespaces is refused.
	root = fakeProc(t, map[string][]string{"10": {"user:[1]", "pid:[2]", "socket:[222]"}})
	if err := os.Remove(filepath.Join(root, "10", "ns", "pid")); err != nil {
		t.Fatal(err)
	}
	if err := sameNamespaces(root, 222, uid); err == nil || !strings.Contains(err.Error(), "cannot read the namespaces of process 10") {
		t.Errorf("unreadable namespaces: %v", err)
	}
	// Only this user's processes are looked into.
	if err := sameNamespaces(fakeProc(t, map[string][]string{"10": {"user:[1]", "pid:[2]", "socket:[222]"}}), 222, uid+1); !errors.Is(err, ErrNoHolder) {
		t.Errorf("another user's process taken for the holder: %v", err)
	}
	if err := sameNamespaces(t.TempDir(), 222, uid); err == nil {
		t.Error("no /proc/self: accepted")
	}
}

// BenchmarkCheck is what kin serve --listen spends per connection: the
// kernel's tables, then this user's processes' descriptors until the
// holder (here this process, found wherever it is in /proc's order).
func BenchmarkCheck(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	dialed, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer dialed.Close()
	accepted, err := ln.Accept()
	if err != nil {
		b.Fatal(err)
	}
	defer accepted.Close()
	for b.Loop() {
		if err := Check(accepted); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNoHolder is the worst case: every process of this user looked
// into, none holding the socket (a sandboxed peer kin cannot see into).
func BenchmarkNoHolder(b *testing.B) {
	for b.Loop() {
		if err := sameNamespaces(procRoot, 1<<40, os.Geteuid()); !errors.Is(err, ErrNoHolder) {
			b.Fatal(err)
		}
	}
}
