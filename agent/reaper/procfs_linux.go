package reaper

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// ident names one process for its whole life: a pid is reused, a pid with
// its start time (clock ticks after boot) is not.
type ident struct {
	pid   int
	start uint64
}

// procInfo is what kin reads of a process in /proc/<pid>/stat.
type procInfo struct {
	ident
	ppid  int
	pgrp  int
	state byte // R, S, D, Z (zombie), X (dead), ...
}

func (p procInfo) live() bool { return p.state != 'Z' && p.state != 'X' }

// table is a snapshot of every process kin can see.
type table struct {
	procs    map[int]procInfo
	children map[int][]int
}

// readTable reads the processes the package may act on: every process
// below kin. Once kin is a subreaper (Enable) nothing kin started can leave
// its tree (an orphan is re-parented to kin, or to a subreaper below it),
// so kin's tree is read from the children lists of /proc/<pid>/task/*/
// (readTree): it costs what kin started, where reading all of /proc cost
// what the machine runs (a few milliseconds a pass on a desktop, several
// passes at the end of every command). Otherwise, or where those lists
// cannot be read, it reads all of /proc. Processes that end while it
// reads are left out.
func readTable() table {
	if enabled {
		if t, ok := readTree(); ok {
			return t
		}
	}
	return readAll()
}

// readTree reads the processes below kin, walking the children lists; ok
// is false when a list of a live process cannot be read (no
// CONFIG_PROC_CHILDREN, or another user's process kin may not look into).
func readTree() (table, bool) {
	t := table{procs: map[int]procInfo{}, children: map[int][]int{}}
	queue := []int{self}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		kids, ok := childrenOf(pid)
		if !ok {
			return t, false
		}
		for _, c := range kids {
			if _, dup := t.procs[c]; dup {
				continue
			}
			if p, ok := readStat(c); ok {
				t.procs[c] = p
				t.children[p.ppid] = append(t.children[p.ppid], c)
				queue = append(queue, c)
			}
		}
	}
	return t, true
}

// childrenOf reads pid's children from the children list of each of its
// threads (a child belongs to the thread that forked it, or that adopted
// it); a process that has ended has none.
func childrenOf(pid int) ([]int, bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := names(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true
	}
	if err != nil {
		return nil, false
	}
	var out []int
	for _, task := range tasks {
		b, err := readWhole(dir+"/"+task+"/children", 512)
		if errors.Is(err, fs.ErrNotExist) && pid != self {
			continue // the thread ended; for kin itself it means no such file at all
		}
		if err != nil {
			return nil, false
		}
		for _, f := range bytes.Fields(b) {
			if c, err := strconv.Atoi(string(f)); err == nil {
				out = append(out, c)
			}
		}
	}
	return out, true
}

// Descendants lists the processes below pid (not pid itself), read from
// the children lists of their threads, or from all of /proc where those
// lists cannot be read. Processes that end meanwhile are left out.
func Descendants(pid int) []int {
	fromAll := func() []int {
		var out []int
		for _, p := range readAll().descendants(pid) {
			out = append(out, p.pid)
		}
		return out
	}
	if !childrenListed() {
		return fromAll()
	}
	var out []int
	seen := map[int]bool{pid: true}
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		kids, ok := childrenOf(queue[0])
		if !ok {
			return fromAll()
		}
		for _, c := range kids {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out
}

// childrenListed reports whether the kernel keeps children lists
// (CONFIG_PROC_CHILDREN): without them childrenOf of another process than
// kin finds no file and so, wrongly, no children.
var childrenListed = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/thread-self/children")
	return err == nil
})

// readAll reads every process in /proc.
func readAll() table {
	t := table{procs: map[int]procInfo{}, children: map[int][]int{}}
	all, _ := pids()
	for _, pid := range all {
		if p, ok := readStat(pid); ok {
			t.procs[pid] = p
			t.children[p.ppid] = append(t.children[p.ppid], pid)
		}
	}
	return t
}

// readStat parses /proc/<pid>/stat: "pid (comm) state ppid pgrp ... ";
// comm may hold spaces and parentheses, so fields count from the last ')'.
// The start time is field 22, the 20th after comm.
func readStat(pid int) (procInfo, bool) {
	p, _, ok := readStatComm(pid)
	return p, ok
}

// readStatComm is readStat that also gives the command name (comm, the
// bytes between the first '(' and the last ')').
func readStatComm(pid int) (procInfo, []byte, bool) {
	b, err := readWhole("/proc/"+strconv.Itoa(pid)+"/stat", 512)
	if err != nil {
		return procInfo{}, nil, false
	}
	i := bytes.LastIndexByte(b, ')')
	j := bytes.IndexByte(b, '(')
	if i < 0 || j < 0 || j > i {
		return procInfo{}, nil, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 || len(f[0]) == 0 {
		return procInfo{}, nil, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgrp, err2 := strconv.Atoi(string(f[2]))
	start, err3 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procInfo{}, nil, false
	}
	return procInfo{ident: ident{pid: pid, start: start}, ppid: ppid, pgrp: pgrp, state: f[0][0]}, b[j+1 : i], true
}

// Started reads when process pid started, on the wall clock, and its
// command name (comm); ok is false when there is no such process or its
// stat cannot be read or parsed. The kernel gives the start in clock
// ticks after boot, rounded down: the process started within a tick
// (1/userHZ s) after at. Boot is put on the wall clock as it stands now
// (CLOCK_REALTIME less CLOCK_BOOTTIME, which counts suspended time as the
// start does): a step of the wall clock since the process started moves
// at by that step.
func Started(pid int) (at time.Time, comm string, ok bool) {
	p, name, ok := readStatComm(pid)
	if !ok {
		return time.Time{}, "", false
	}
	// the wall clock first: the time between the two reads then makes
	// boot, and at, earlier, never later
	var wall, boot unix.Timespec
	if unix.ClockGettime(unix.CLOCK_REALTIME, &wall) != nil || unix.ClockGettime(unix.CLOCK_BOOTTIME, &boot) != nil {
		return time.Time{}, "", false
	}
	since := time.Duration(p.start) * (time.Second / userHZ)
	return time.Unix(wall.Unix()).Add(since - time.Duration(boot.Nano())), string(name), true
}

// ProcState reads pid's state letter (R, S, Z for a zombie, ...) and its
// process group; ok is false when there is no such process.
func ProcState(pid int) (state byte, pgrp int, ok bool) {
	p, ok := readStat(pid)
	return p.state, p.pgrp, ok
}

// liveInGroup looks for a live (not zombie) member of group pgid below kin
// (see readTable) or, when kin is no subreaper, in all of /proc; ok is
// false when /proc cannot be read.
func liveInGroup(pgid int) (alive, ok bool) {
	mu.Lock()
	sub := enabled
	mu.Unlock()
	if sub {
		if t, ok := readTree(); ok {
			for _, p := range t.procs {
				if p.pgrp == pgid && p.live() {
					return true, true
				}
			}
			return false, true
		}
	}
	all, ok := pids()
	if !ok {
		return false, false
	}
	for _, pid := range all {
		if p, ok := readStat(pid); ok && p.pgrp == pgid && p.live() {
			return true, true
		}
	}
	return false, true
}

// is reports whether id is still the process it names.
func (t table) is(id ident) (procInfo, bool) {
	p, ok := t.procs[id.pid]
	return p, ok && p.start == id.start
}

// descendants returns every process below pid (not pid itself).
func (t table) descendants(pid int) []procInfo {
	var out []procInfo
	queue := append([]int(nil), t.children[pid]...)
	seen := map[int]bool{pid: true}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if seen[c] {
			continue
		}
		seen[c] = true
		if p, ok := t.procs[c]; ok {
			out = append(out, p)
		}
		queue = append(queue, t.children[c]...)
	}
	return out
}

// markerOf returns the value of the marker variable in p's environment
// ("" if it has none or its environment cannot be read: another user's
// process, or a zombie, whose environment is gone).
//
// A process in the middle of execve is read with care. /proc/<pid>/environ
// reads the memory of the image the process had when the file was opened;
// read in several calls (os.ReadFile starts with 512 bytes), a read that
// spans the moment execve drops that image ends early, with part of the
// environment and without the marker that comes last: a command's `setsid
// sleep &` looked at just then escaped its owner (29 looks in 200 once
// kin's look at its tree became fast). One read call holds the image for
// the whole read, so the environment is read in one call. A new image
// shows no environment until execve has set it up: for a process that
// started moments ago, an empty one is read again.
func markerOf(p procInfo) string {
	path := "/proc/" + strconv.Itoa(p.pid) + "/environ"
	b, err := readWhole(path, 16<<10)
	// up to 50 ms: a loaded machine may hold an execve that long (a
	// process that cleared its environment pays it while it is young)
	for i := 0; err == nil && len(b) == 0 && i < 100 && young(p); i++ {
		time.Sleep(500 * time.Microsecond)
		b, err = readWhole(path, 16<<10)
	}
	if err != nil {
		return ""
	}
	key := []byte(markerVar + "=")
	val := ""
	for _, kv := range bytes.Split(b, []byte{0}) {
		if bytes.HasPrefix(kv, key) {
			val = string(kv[len(key):]) // the last one wins, as in getenv after exec's dedup
		}
	}
	return val
}

// pids lists the processes in /proc; ok is false when it cannot be read
// at all (a listing cut short by an error gives what was read).
func pids() (out []int, ok bool) {
	all, err := names("/proc")
	if err != nil && all == nil {
		return nil, false
	}
	for _, name := range all {
		if name == "" || name[0] < '0' || name[0] > '9' {
			continue
		}
		if pid, err := strconv.Atoi(name); err == nil {
			out = append(out, pid)
		}
	}
	return out, true
}

// names lists folder dir (a /proc one) with open, getdents and close,
// for the reason readWhole says.
func names(dir string) ([]string, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var out []string
	buf := make([]byte, 4096)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return out, err
		}
		if n <= 0 {
			return out, nil
		}
		_, _, out = unix.ParseDirent(buf[:n], -1, out)
	}
}

// readWhole reads a /proc file in one read call, from size bytes (a larger
// buffer and again from the start when it fills one). It makes three
// system calls where os.ReadFile makes eight (it sets the file
// non-blocking, tries the poller, which /proc refuses, sets it back and
// stats it), and the end of every command reads a stat and a children
// list per process and thread below kin. Its errors are the system's
// (unix.ENOENT is fs.ErrNotExist to errors.Is).
func readWhole(path string, size int) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	for ; ; size *= 4 {
		buf := make([]byte, size)
		n, err := unix.Pread(fd, buf, 0)
		for err == unix.EINTR {
			n, err = unix.Pread(fd, buf, 0)
		}
		if err != nil {
			return nil, err
		}
		if n < size || size >= 4<<20 {
			return buf[:n], nil
		}
	}
}

// young reports whether p started within the last half second (its start
// time is in clock ticks after boot, USER_HZ a second).
func young(p procInfo) bool {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return true
	}
	now := uint64(ts.Nano()) / uint64(time.Second/userHZ)
	return now < p.start+userHZ/2
}

// userHZ is the clock tick of /proc's times (USER_HZ, 100 on Linux).
const userHZ = 100
