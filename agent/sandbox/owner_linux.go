//go:build linux

package sandbox

import (
	"os"
	"time"

	"github.com/kin-dev/kin/agent/reaper"
	"golang.org/x/sys/unix"
)

// ownerSlack is how much later than its marker's last write a process may
// seem to have started and still count as the kin that wrote it: its start
// is rounded down to a clock tick (10 ms), a file's mtime may lag the write
// by one of the kernel's ticks (up to 10 ms), and boot is put on the wall
// clock from two clock reads. Three ticks cover all of it, on the side of
// keeping.
const ownerSlack = 30 * time.Millisecond

// ownerAlive reports whether the kin that wrote the marker name (named by
// its pid) may still run: a process with that pid exists, and it did not
// start after the marker was last written (the kin writes its marker after
// it starts; a process that started later got the pid of a kin that ended
// and would keep that kin's placeholders in the workspace for as long as
// it runs). Whatever cannot be told counts as alive (the marker is then
// kept, and so are its placeholders): the marker's time or the process's
// start unreadable, within ownerSlack of each other, or the marker on a
// file system whose times may not be this machine's clock (localTimes).
// Keeping a placeholder costs an empty file; removing one a live kin's
// command binds would let that command create the protected path.
//
// A process named as this one is (kin) counts as alive too: the wall clock
// stepped forward since a kin wrote its marker (a virtual machine resumed
// and set to the host's time) makes that kin seem to have started after
// it, and its marker must not go while it runs. A kin that got a killed
// kin's pid keeps that one's placeholders only until it ends.
func ownerAlive(pid int, name string) bool {
	if !processAlive(pid) {
		return false
	}
	fi, err := os.Lstat(name)
	if err != nil {
		return true
	}
	written := fi.ModTime()
	slack := ownerSlack
	if written.Nanosecond() == 0 {
		// a file system keeping whole seconds (ext4 with small inodes) or
		// two (FAT): the write came up to two seconds later
		slack += 2 * time.Second
	}
	started, comm, ok := reaper.Started(pid)
	if !ok || !started.After(written.Add(slack)) {
		return true
	}
	return comm == selfComm() || !localTimes(name)
}

// localTimes reports whether the file system holding name is one that
// stamps its files' times with this machine's clock: a network one (NFS,
// SMB, FUSE's sshfs) stamps them with the server's, which may be behind
// this one's by more than any slack, and a live kin's marker would then
// seem written before the kin started. Only file systems known to be local
// count; any other, or one statfs cannot tell, does not.
func localTimes(name string) bool {
	var st unix.Statfs_t
	if unix.Statfs(name, &st) != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC,
		unix.TMPFS_MAGIC, unix.F2FS_SUPER_MAGIC, unix.BCACHEFS_SUPER_MAGIC,
		unix.OVERLAYFS_SUPER_MAGIC, // its upper layer cannot be a network one
		zfsSuperMagic:
		return true
	}
	return false
}

// zfsSuperMagic is OpenZFS's file system type (not in x/sys/unix).
const zfsSuperMagic = 0x2fc12fc1

// selfComm is this process's command name as /proc shows it (its
// executable's name, cut to 15 bytes); "" when it cannot be read, and
// then no other process is taken for a kin by its name.
func selfComm() string {
	_, comm, ok := reaper.Started(os.Getpid())
	if !ok {
		return ""
	}
	return comm
}
