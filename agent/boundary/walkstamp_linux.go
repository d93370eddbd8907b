package boundary

import (
	"os"
	"sync"
	"syscall"
	"time"
)

// dirStamp is what changes when an entry of a folder is made, removed or
// renamed: its ctime and mtime (the kernel sets both; only the mtime can
// be set back, and setting it moves the ctime), and its identity (a folder
// moved aside and another put in its place).
type dirStamp struct {
	dev, ino     uint64
	mtime, ctime int64 // nanoseconds
}

// stampOf is the stamp of folder path (fi its lstat), and whether its file
// system keeps folders' times (else it is not to be reused).
func stampOf(path string, fi os.FileInfo) (dirStamp, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return dirStamp{}, false
	}
	s := dirStamp{dev: st.Dev, ino: st.Ino, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
	return s, keepsTimes(s.dev, path)
}

// trusted: both times are older than the margin when the folder was read,
// so any later change gives it a later ctime.
func (s dirStamp) trusted(read time.Time) bool {
	limit := read.Add(-racyMargin).UnixNano()
	return s.ctime < limit && s.mtime < limit
}

// File systems that set a folder's times on every change of its entries,
// locally and at once. Network and FUSE file systems are not among them:
// another machine's change, or a cached attribute, could leave the times
// as they were.
var timeKeeping = map[int64]bool{
	0xEF53:     true, // ext2/3/4
	0x58465342: true, // xfs
	0x9123683E: true, // btrfs
	0x01021994: true, // tmpfs
	0x794C7630: true, // overlayfs
	0xF2F52010: true, // f2fs
	0x2FC12FC1: true, // zfs
	0xCA451A4E: true, // bcachefs
}

var fsKinds = struct {
	sync.Mutex
	m map[uint64]bool
}{m: map[uint64]bool{}}

// keepsTimes reports whether the file system of device dev (where path
// lies) is one of timeKeeping, asked once per device.
func keepsTimes(dev uint64, path string) bool {
	fsKinds.Lock()
	defer fsKinds.Unlock()
	if ok, seen := fsKinds.m[dev]; seen {
		return ok
	}
	var sf syscall.Statfs_t
	if err := syscall.Statfs(path, &sf); err != nil {
		return false
	}
	ok := timeKeeping[int64(sf.Type)]
	fsKinds.m[dev] = ok
	return ok
}
