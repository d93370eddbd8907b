//go:build !unix

package builtin

import (
	"errors"
	"io"
	"os"
)

// readSmall reads a whole regular file into buf (grown as needed), or
// reports large for files over limit without reading them.
func readSmall(p string, buf []byte, limit int64) (data, newBuf []byte, large bool, err error) {
	f, err := os.Open(p)
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
	if cap(buf) < size {
		buf = make([]byte, size, size+size/4+4096)
	}
	n, err := io.ReadFull(f, buf[:size])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, buf, false, err
	}
	return buf[:n], buf, false, nil
}
