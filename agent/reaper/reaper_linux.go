package reaper

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// markerVar is the environment variable that tags a tagged owner's
// processes. Its value is opaque: an instance id and a counter.
const markerVar = "KIN_PROC_OWNER"

// The package's state is the process's: there is one subreaper per process.
var (
	// mu guards owners, nextID and enabled, every Owner's fields, and
	// serialises every wait4, so that a pid checked to be kin's zombie
	// child cannot be reaped (and reused) by anyone else before kin reaps it.
	mu       sync.Mutex
	owners   = map[string]*Owner{} // started, not yet stopped, by marker
	nextID   int
	enabled  bool
	armed    chan struct{} // closed once SIGCHLD is handled (Enable)
	instance string        // set by the first tagged owner: see newInstance
	self     = os.Getpid()
)

func newInstance() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Enable makes this process a child subreaper and starts reaping the
// zombies of adopted processes that an owner's scan attributed. kin serve
// calls it once at start. Calling it again does nothing.
func Enable() error {
	mu.Lock()
	defer mu.Unlock()
	if enabled {
		return nil
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return err
	}
	enabled = true
	armed = make(chan struct{})
	sig := make(chan os.Signal, 1)
	go func() {
		// Handled from here, not before Enable returns: os/signal enables
		// a signal with a round trip to the runtime's signal thread, which
		// kin's start would wait for. NewOwner waits for it instead, so no
		// owner's process exists before SIGCHLD is handled.
		signal.Notify(sig, syscall.SIGCHLD)
		close(armed)
		for range sig {
			// A child changed state: a leader may have exited (its children
			// are re-parented to kin now, and still carry their marker) or
			// an adopted process may have died (a zombie to reap).
			mu.Lock()
			if len(owners) > 0 {
				t := readTable()
				scanLocked(t)
				for _, o := range owners {
					o.reapLocked(t)
				}
			}
			mu.Unlock()
		}
	}()
	return nil
}

// Owner is one program kin started and the processes it started.
type Owner struct {
	marker string // the marker value; "" for an untagged owner

	// guarded by the package's mu
	leader  ident
	started bool
	seen    map[ident]bool // attributed processes, never the leader
}

// NewOwner returns an owner. A tagged owner's processes carry a marker
// variable in their environment (see Env).
func NewOwner(tagged bool) *Owner {
	mu.Lock()
	a := armed
	mu.Unlock()
	if a != nil {
		<-a
	}
	o := &Owner{seen: map[ident]bool{}}
	if tagged {
		mu.Lock()
		nextID++
		if instance == "" {
			// Not at package init: every kin process would pay for a read
			// of the system's random source before main, used or not.
			instance = newInstance()
		}
		o.marker = instance + "-" + strconv.Itoa(nextID)
		mu.Unlock()
	}
	return o
}

// Env returns env (nil: this process's environment) with the owner's
// marker variable set; an untagged owner's env is returned as it is.
func (o *Owner) Env(env []string) []string {
	if o.marker == "" {
		return env
	}
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if len(kv) > len(markerVar) && kv[:len(markerVar)+1] == markerVar+"=" {
			continue // a kin running under kin: its own marker, not its parent's
		}
		out = append(out, kv)
	}
	return append(out, markerVar+"="+o.marker)
}

// Started records the owner's leader, the process kin started (os/exec
// waits for it; the package never does). Call it after Start and before
// Wait, while the leader's pid cannot have been reused.
func (o *Owner) Started(p *os.Process) {
	st, ok := readStat(p.Pid)
	mu.Lock()
	defer mu.Unlock()
	o.leader = ident{pid: p.Pid}
	if ok {
		o.leader = st.ident
	}
	o.started = true
	owners[o.key()] = o
}

func (o *Owner) key() string {
	if o.marker != "" {
		return o.marker
	}
	return "leader-" + strconv.Itoa(o.leader.pid)
}

// Snapshot records the leader's descendants as they are now. Call it before
// signalling the leader's process group: once the leader is gone, the
// children that left its group are re-parented and no longer below it.
func (o *Owner) Snapshot() {
	mu.Lock()
	defer mu.Unlock()
	o.refreshLocked(readTable())
}

// Signal sends sig to every live process attributed to the owner (the
// leader excepted: its process group is the caller's) and reports how many.
func (o *Owner) Signal(sig syscall.Signal) int {
	mu.Lock()
	defer mu.Unlock()
	t := readTable()
	o.refreshLocked(t)
	n := 0
	for id := range o.seen {
		if p, ok := t.is(id); ok && p.live() && signal1(id, sig) {
			n++
		}
	}
	return n
}

// Alive reports whether a process attributed to the owner still runs,
// reaping those that are kin's zombies.
func (o *Owner) Alive() bool {
	mu.Lock()
	defer mu.Unlock()
	t := readTable()
	o.refreshLocked(t)
	o.reapLocked(t)
	for id := range o.seen {
		if p, ok := t.is(id); ok && p.live() {
			return true
		}
	}
	return false
}

// Stop ends every process attributed to the owner: SIGTERM, up to grace
// for them to exit, then SIGKILL; it reaps those that are kin's children
// and forgets the owner. Call it once the leader has exited (or is being
// stopped by its caller).
func (o *Owner) Stop(grace time.Duration) {
	defer func() {
		mu.Lock()
		if owners[o.key()] == o {
			delete(owners, o.key())
		}
		mu.Unlock()
	}()
	// Nothing left, the usual end of a command: one pass over /proc.
	if !o.Alive() {
		return
	}
	o.Signal(syscall.SIGTERM)
	killAt := time.Now().Add(grace)
	giveUp := killAt.Add(2 * time.Second) // a process stuck in the kernel (D state)
	killed := false
	for o.Alive() && time.Now().Before(giveUp) {
		if !killed && !time.Now().Before(killAt) {
			o.Signal(syscall.SIGKILL)
			killed = true
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// refreshLocked adds to seen the leader's descendants and, for a tagged
// owner, the processes below kin carrying its marker and their
// descendants; it drops what has gone.
func (o *Owner) refreshLocked(t table) {
	for id := range o.seen {
		if _, ok := t.is(id); !ok {
			delete(o.seen, id)
		}
	}
	if !o.started {
		return
	}
	add := func(p procInfo) {
		if p.ident != o.leader {
			o.seen[p.ident] = true
		}
	}
	if _, ok := t.is(o.leader); ok {
		for _, p := range t.descendants(o.leader.pid) {
			add(p)
		}
	}
	if o.marker != "" {
		for _, p := range t.descendants(self) {
			if p.live() && !o.seen[p.ident] && p.ident != o.leader && markerOf(p) == o.marker {
				add(p)
			}
		}
	}
	// what an attributed process started is the owner's too
	for id := range o.seen {
		for _, p := range t.descendants(id.pid) {
			add(p)
		}
	}
}

// scanLocked attributes marked processes below kin to their owners in one
// pass (the SIGCHLD path), reading each environment once.
func scanLocked(t table) {
	leaders := map[ident]bool{}
	for _, o := range owners {
		leaders[o.leader] = true
		if _, ok := t.is(o.leader); ok {
			for _, p := range t.descendants(o.leader.pid) {
				o.seen[p.ident] = true
			}
		}
	}
	for _, p := range t.descendants(self) {
		if !p.live() || leaders[p.ident] {
			continue
		}
		if o := owners[markerOf(p)]; o != nil && o.marker != "" {
			o.seen[p.ident] = true
		}
	}
}

// EndGroup is Stop for a leader kin started at the head of a new process
// group (Setpgid or Setsid) and has waited for: it waits, up to grace, until
// nothing of the group runs, then reaps the group's processes kin adopted
// and forgets the owner. bubblewrap's first process exits as soon as the
// sandbox's init reports the command's status, before that init has exited;
// the init is then kin's (the subreaper's) child, and nothing tagged tells
// its zombie apart once its environment is gone. Its process group does:
// the group is the leader's, which kin started, and every process kin
// starts itself leads a group of its own or stays in kin's, so a zombie
// child of kin in the leader's group that is not the leader is never one
// os/exec waits for. The zombie holds the group's id, so it cannot be
// reused meanwhile.
func (o *Owner) EndGroup(grace time.Duration) {
	for deadline := time.Now().Add(grace); o.started && GroupAlive(o.leader.pid) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	o.reapGroupLocked()
	if owners[o.key()] == o {
		delete(owners, o.key())
	}
}

// reapGroupLocked reaps the zombie children of kin in the owner's leader's
// process group, the leader excepted (see EndGroup). It reads kin's
// children only (every command's end pays for it), not all of /proc.
func (o *Owner) reapGroupLocked() {
	if !o.started {
		return
	}
	for _, q := range selfChildren() {
		if q.live() || q.ppid != self || q.pgrp != o.leader.pid || q.pid == o.leader.pid || q.start < o.leader.start {
			continue
		}
		var ws unix.WaitStatus
		_, _ = unix.Wait4(q.pid, &ws, unix.WNOHANG, nil)
		delete(o.seen, q.ident)
	}
}

// reapLocked waits for the owner's processes that are kin's zombies. Each
// was checked, under mu, to be the attributed process (pid and start time),
// a child of kin and dead: until kin reaps it, its pid cannot be reused.
func (o *Owner) reapLocked(t table) {
	for id := range o.seen {
		p, ok := t.is(id)
		if !ok || p.ppid != self || p.live() {
			continue
		}
		var ws unix.WaitStatus
		if pid, err := unix.Wait4(id.pid, &ws, unix.WNOHANG, nil); pid == id.pid || errors.Is(err, unix.ECHILD) {
			delete(o.seen, id)
		}
	}
}

// signal1 sends sig to id if it is still that process: through a pidfd
// where the kernel has them (the check and the signal then name the same
// process for certain), else with kill(2) right after the check.
func signal1(id ident, sig syscall.Signal) bool {
	fd, err := unix.PidfdOpen(id.pid, 0)
	if err == nil {
		defer unix.Close(fd)
		if p, ok := readStat(id.pid); !ok || p.start != id.start {
			return false
		}
		return unix.PidfdSendSignal(fd, sig, nil, 0) == nil
	}
	if p, ok := readStat(id.pid); !ok || p.start != id.start {
		return false
	}
	return unix.Kill(id.pid, sig) == nil
}

// Shutdown stops every process still below kin, attributed or not: kin is
// exiting and nothing it started may outlive it. SIGTERM, up to grace, then
// SIGKILL; zombie children are reaped. Call it only when the process is
// about to exit (it may reap a child whose os/exec Wait is still pending).
func Shutdown(grace time.Duration) {
	runtimeProbeDone()
	mu.Lock()
	defer mu.Unlock()
	below := func() []procInfo {
		t := readTable()
		var live []procInfo
		for _, p := range t.descendants(self) {
			if p.live() {
				live = append(live, p)
			} else if p.ppid == self {
				var ws unix.WaitStatus
				_, _ = unix.Wait4(p.pid, &ws, unix.WNOHANG, nil)
			}
		}
		return live
	}
	live := below()
	if len(live) == 0 {
		return
	}
	for _, p := range live {
		signal1(p.ident, syscall.SIGTERM)
	}
	killAt := time.Now().Add(grace)
	giveUp := killAt.Add(2 * time.Second)
	killed := false
	for len(live) > 0 && time.Now().Before(giveUp) {
		if !killed && !time.Now().Before(killAt) {
			for _, p := range live {
				signal1(p.ident, syscall.SIGKILL)
			}
			killed = true
		}
		time.Sleep(10 * time.Millisecond)
		live = below()
	}
}

// runtimeProbeDone returns once Go's one-time pidfd probe has run: the
// first os.StartProcess (or FindProcess) clones a child with CLONE_VM and
// CLONE_VFORK that only exits, without blocking signals first, so it shares
// kin's memory and runs kin's signal handlers. Shutdown listed that child
// among the processes below kin and sent it SIGTERM (then SIGKILL): its
// handler, run in kin's memory, left the forking thread's goroutine state
// that of the signal stack, and kin died at exit with "fatal: morestack on
// gsignal" (SIGTRAP), on a loaded machine where the child waited to be
// scheduled (kin serve shut down while the sandbox probe started its first
// process). The probe runs once per process (a sync.Once that waits while
// it runs): after it, no such child can exist.
func runtimeProbeDone() {
	if p, err := os.FindProcess(self); err == nil {
		_ = p.Release()
	}
}

// selfChildren reads kin's children from /proc/self/task/*/children (a
// kernel with CONFIG_PROC_CHILDREN, as every common one), else from the
// whole of /proc.
func selfChildren() []procInfo {
	kids, ok := childrenOf(self)
	if !ok {
		return tableChildren()
	}
	var out []procInfo
	for _, pid := range kids {
		if p, ok := readStat(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

func tableChildren() []procInfo {
	t := readTable()
	var out []procInfo
	for _, pid := range t.children[self] {
		out = append(out, t.procs[pid])
	}
	return out
}
