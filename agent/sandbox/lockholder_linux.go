package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/kin-dev/kin/agent/reaper"
)

// lockHolder names the process holding a flock on f (the kernel lists
// every lock in /proc/locks, by device and inode), and whether it is
// stopped; 0 when none is found (a holder in another PID namespace, a
// file system whose device the list names otherwise). Read only once a
// wait gave up: the list is as long as the machine's locks.
func lockHolder(f *os.File) (pid int, stopped bool) {
	fi, err := f.Stat()
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	dev := uint64(st.Dev)
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(dev), unix.Minor(dev), st.Ino)
	ino := ":" + strconv.FormatUint(st.Ino, 10)
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0, false
	}
	var byIno []int
	for _, line := range strings.Split(string(b), "\n") {
		// "1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234 0 EOF"; a waiter's
		// line has "->" after the number, and is passed by
		fs := strings.Fields(line)
		if len(fs) < 6 || fs[1] != "FLOCK" {
			continue
		}
		p, err := strconv.Atoi(fs[4])
		if err != nil || p <= 0 {
			continue
		}
		if fs[5] == want {
			return p, isStopped(p)
		}
		if strings.HasSuffix(fs[5], ino) {
			byIno = append(byIno, p) // an overlay may list another device
		}
	}
	if len(byIno) == 1 {
		return byIno[0], isStopped(byIno[0])
	}
	return 0, false
}

// isStopped reports whether process pid is stopped (by a signal, or in a
// debugger).
func isStopped(pid int) bool {
	state, _, ok := reaper.ProcState(pid)
	return ok && (state == 'T' || state == 't')
}
