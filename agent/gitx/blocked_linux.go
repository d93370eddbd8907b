package gitx

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/kin-dev/kin/agent/reaper"
)

// blockedOn is the FIFO or device a git (pid, or a git it started) waits
// on, read from /proc: a thread asleep in open(2) of such a file (a FIFO
// waits there for a writer), or in read(2) of one it opened (a FIFO whose
// writer sends nothing, a terminal). known is false when /proc cannot say
// (an architecture whose system call numbers are not listed here, or
// /proc/<pid>/syscall not readable); then the caller falls back to
// looking for such files. A git that is merely slow, or that waits on
// its own stdin or on a git it started, is waiting on nothing of the kind.
func blockedOn(pid int) (path string, known bool) {
	if !canLookInto() {
		return "", false
	}
	nrs := syscallNrs[runtime.GOARCH]
	pids := append([]int{pid}, reaper.Descendants(pid)...)
	for i, p := range pids {
		tasks, err := os.ReadDir("/proc/" + strconv.Itoa(p) + "/task")
		if err != nil {
			if i == 0 && errors.Is(err, fs.ErrPermission) {
				return "", false
			}
			continue // ended meanwhile
		}
		for _, task := range tasks {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/task/" + task.Name() + "/syscall")
			if err != nil {
				if i == 0 && errors.Is(err, fs.ErrPermission) {
					return "", false // not ours to look into
				}
				continue // a thread that ended meanwhile
			}
			f, ok := waitsOn(p, nrs, string(b))
			if !ok {
				return "", false
			}
			if f != "" {
				return f, true
			}
		}
	}
	return "", true
}

// sysNrs are an architecture's numbers of the system calls git opens
// and reads files with (open is -2, none, where there is only openat).
type sysNrs struct{ open, openat, openat2, read, readv, pread int }

var syscallNrs = map[string]sysNrs{
	"amd64": {open: 2, openat: 257, openat2: 437, read: 0, readv: 19, pread: 17},
	"arm64": {open: -2, openat: 56, openat2: 437, read: 63, readv: 65, pread: 67},
}

// canLookInto reports whether this kernel says which system call a
// process is in (/proc/<pid>/syscall), on an architecture whose numbers
// are listed.
var canLookInto = sync.OnceValue(func() bool {
	_, known := syscallNrs[runtime.GOARCH]
	_, err := os.Stat("/proc/self/syscall")
	return known && err == nil
})

// waitsOn is the FIFO or device the thread of process pid whose
// /proc/…/syscall line is line is asleep opening or reading, or "";
// ok is false when the name of a file it is opening cannot be read.
func waitsOn(pid int, nrs sysNrs, line string) (name string, ok bool) {
	f := strings.Fields(line)
	if len(f) < 3 {
		return "", true // running, or not in a system call
	}
	var a [3]uint64
	for i := range a {
		if i+1 < len(f) {
			a[i], _ = strconv.ParseUint(strings.TrimPrefix(f[i+1], "0x"), 16, 64)
		}
	}
	nr, err := strconv.Atoi(f[0])
	if err != nil || nr < 0 {
		return "", true // -1: asleep, but not in a system call
	}
	proc := "/proc/" + strconv.Itoa(pid)
	switch nr {
	case nrs.open, nrs.openat, nrs.openat2:
		dirfd, ptr := int32(-100), a[0] // AT_FDCWD
		if nr != nrs.open {
			dirfd, ptr = int32(uint32(a[0])), a[1]
		}
		name := cString(proc+"/mem", ptr)
		if name == "" {
			return "", false
		}
		if !filepath.IsAbs(name) {
			base := proc + "/cwd"
			if dirfd != -100 {
				base = proc + "/fd/" + strconv.Itoa(int(dirfd))
			}
			dir, err := os.Readlink(base)
			if err != nil {
				return "", true
			}
			name = filepath.Join(dir, name)
		}
		if fi, err := os.Stat(name); err == nil && irregular(name, fs.FileInfoToDirEntry(fi)) {
			return filepath.Clean(name), true
		}
	case nrs.read, nrs.readv, nrs.pread:
		// 0, 1 and 2 are what kin gave git (a patch on stdin may be slow
		// to come); a file git opened itself has a higher number
		if a[0] <= 2 || a[0] > 1<<20 {
			return "", true
		}
		fd := proc + "/fd/" + strconv.FormatUint(a[0], 10)
		name, err := os.Readlink(fd)
		if err != nil || !filepath.IsAbs(name) {
			return "", true // a pipe or socket to a git it started: "pipe:[…]"
		}
		if fi, err := os.Stat(fd); err == nil && irregular(fd, fs.FileInfoToDirEntry(fi)) {
			return name, true
		}
	}
	return "", true
}

// cString is the NUL-terminated string at addr in the memory file mem.
func cString(mem string, addr uint64) string {
	f, err := os.Open(mem)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n, _ := f.ReadAt(buf, int64(addr))
	if i := bytes.IndexByte(buf[:n], 0); i >= 0 {
		return string(buf[:i])
	}
	return ""
}
