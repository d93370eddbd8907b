package builtin

import (
	"errors"
	"io"

	"github.com/kin-dev/kin/agent/boundary"
)

// readSmall reads a whole regular file into buf (grown as needed) for
// search, through the trust boundary's resolver (beneath its workspace
// folder: a symlink swapped in after the walk saw the file is followed
// only while it stays inside), or reports large for files over limit
// without reading them.
func readSmall(p string, buf []byte, limit int64) (data, newBuf []byte, large bool, err error) {
	f, err := boundary.Open(p)
	if err != nil {
		return nil, buf, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, buf, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, buf, false, errors.New("not a regular file")
	}
	if fi.Size() > limit {
		return nil, buf, true, nil
	}
	size := int(fi.Size())
	if cap(buf) < size+1 {
		buf = make([]byte, size+1, size+size/4+4096)
	}
	// one byte more than the size tells a file that grew
	n, err := io.ReadFull(f, buf[:size+1])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, buf, false, err
	}
	return buf[:min(n, size)], buf, false, nil
}
