//go:build unix

package builtin

import (
	"syscall"
)

// readSmall reads a whole regular file into buf (grown as needed) for
// search, with plain system calls: open, fstat, read, close. os.Open would
// add a poller registration and a finalizer per file, which shows on a
// 10,000-file search. O_NOFOLLOW: the walk never follows symlinks, and a
// symlink swapped in after it is not followed either. It reports large for
// files over limit without reading them.
func readSmall(p string, buf []byte, limit int64) (data, newBuf []byte, large bool, err error) {
	var fd int
	for {
		fd, err = syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, buf, false, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, buf, false, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, buf, false, syscall.EINVAL
	}
	if st.Size > limit {
		return nil, buf, true, nil
	}
	size := int(st.Size)
	if cap(buf) < size+1 {
		buf = make([]byte, size+1, size+size/4+4096)
	}
	buf = buf[:cap(buf)]
	n := 0
	for n < size+1 { // one byte more than the size tells a file that grew
		k, err := syscall.Read(fd, buf[n:size+1])
		if err == syscall.EINTR || err == syscall.EAGAIN {
			continue
		}
		if err != nil {
			return nil, buf, false, err
		}
		if k == 0 {
			break
		}
		n += k
	}
	return buf[:min(n, size)], buf, false, nil
}
