package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/kin-dev/kin/agent/lockedfile"
)

// Errors of opening a log for writing.
var (
	// ErrOwned: another kin (another process, or another connection of
	// this one) has the session open. It can be read, not written.
	ErrOwned = errors.New("this session is open in another kin (another editor window or kin serve); it is read-only here until that kin closes it")
	// ErrReadOnly: the log cannot be written (a read-only KIN_HOME).
	ErrReadOnly = errors.New("this session's log cannot be written here")
)

// Log is one session's append-only file, owned by this process while open:
// it holds the session's lock until Close.
//
// Append only writes: the record reaches the kernel (it survives the
// process being killed) but not necessarily the disk. Sync makes everything
// appended so far durable; callers sync where an outcome depends on it
// (before a call runs, before a turn's end is reported) and let the rest be
// grouped.
type Log struct {
	id, path string
	idx      *index

	// readOnly says why records cannot be appended (nil: they can).
	readOnly error

	// mu guards f, size, broken and syncs.
	mu sync.Mutex
	f  *os.File
	// size is where the next record starts: the end of the last whole
	// record written.
	size int64
	// broken is set when a failed write left part of a line that could not
	// be cut off yet; the next Append cuts it first.
	broken error
	syncs  int
}

// openOwned takes the session's lock and makes the log ready to append: a
// line a crash or a failed write left unfinished is cut off (or given its
// newline, when it is a whole record).
func openOwned(id, path string, idx *index) (*Log, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	var readOnly error
	if err != nil {
		// Still own the session, on a read-only descriptor: nobody else may
		// write it while this kin shows it.
		readOnly = fmt.Errorf("%w (%v)", ErrReadOnly, err)
		if f, err = os.Open(path); err != nil {
			return nil, err
		}
	}
	if lerr := lockedfile.TryLock(f); lerr != nil {
		f.Close()
		if errors.Is(lerr, lockedfile.ErrLocked) {
			return nil, ErrOwned
		}
		return nil, fmt.Errorf("locking the session log: %w", lerr)
	}
	// A delete may have won between the open and the lock.
	fi, ferr := f.Stat()
	pi, perr := os.Stat(path)
	if ferr != nil || perr != nil || !os.SameFile(fi, pi) {
		lockedfile.Unlock(f)
		f.Close()
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	l := &Log{id: id, path: path, idx: idx, f: f, readOnly: readOnly, size: fi.Size()}
	if readOnly == nil {
		if l.size, err = repairTail(f, l.size); err != nil {
			l.broken = err // Append tries again
		}
	}
	return l, nil
}

// repairTail makes sure a log ends with a whole line, and returns its size.
func repairTail(f *os.File, size int64) (int64, error) {
	if size == 0 {
		return 0, nil
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, size-1); err != nil {
		return size, err
	}
	if last[0] == '\n' {
		return size, nil
	}
	start := lastLineStart(f, size)
	if size-start <= maxLine {
		frag := make([]byte, size-start)
		if _, err := f.ReadAt(frag, start); err == nil {
			var r Record
			if parse(frag, &r) { // a whole record that lost its newline
				if _, err := f.Write([]byte("\n")); err != nil {
					return size, err
				}
				return size + 1, nil
			}
		}
	}
	if err := f.Truncate(start); err != nil {
		return size, fmt.Errorf("cutting off an unfinished line of the session log: %w", err)
	}
	return start, nil
}

// lastLineStart is the offset just after the last newline before size.
func lastLineStart(f *os.File, size int64) int64 {
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		n := int64(len(buf))
		if n > end {
			n = end
		}
		if _, err := f.ReadAt(buf[:n], end-n); err != nil && err != io.EOF {
			return 0
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return end - n + int64(i) + 1
		}
		end -= n
	}
	return 0
}

// Append writes one record (fitted to the caps) and returns where its line
// starts and how long it is. A failed write is cut off again before the
// next one, so a full disk never leaves half a line for the next record to
// run into.
func (l *Log) Append(r Record) (off int64, n int, err error) {
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	r = Fit(r)
	b, err := encode(r)
	if err != nil {
		return 0, 0, err
	}
	if off, err = l.write(b); err != nil {
		return 0, 0, err
	}
	switch r.Type {
	case TypeTurn:
		l.idx.turnEnded(l.id, r.Time)
	case TypeTitle:
		l.idx.renamed(l.id, r.Time, r.Title)
	}
	return off, len(b), nil
}

func (l *Log) write(b []byte) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.f == nil:
		return 0, errors.New("session log closed")
	case l.readOnly != nil:
		return 0, l.readOnly
	case l.broken != nil:
		if err := l.f.Truncate(l.size); err != nil {
			return 0, fmt.Errorf("saving the session: %w (and could not repair the log: %v)", l.broken, err)
		}
		l.broken = nil
	}
	off := l.size
	if _, err := l.f.Write(b); err != nil {
		if terr := l.f.Truncate(l.size); terr != nil {
			l.broken = err
		}
		return 0, fmt.Errorf("saving the session: %w", err)
	}
	l.size += int64(len(b))
	return off, nil
}

// Sync makes every record appended so far durable.
func (l *Log) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil || l.readOnly != nil {
		return nil
	}
	l.syncs++
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("saving the session: %w", err)
	}
	return nil
}

// Syncs counts the syncs of this log (for tests and benchmarks: a turn's
// durability costs are part of its contract).
func (l *Log) Syncs() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.syncs
}

// ReadOnly says why records cannot be appended: nil when they can. A log on
// a read-only file is still owned (nobody else writes it meanwhile).
func (l *Log) ReadOnly() error { return l.readOnly }

// ReadAt reads back the record whose line starts at off and is n bytes
// long (as Append or a View reported it).
func (l *Log) ReadAt(off int64, n int) (Record, error) {
	l.mu.Lock()
	f := l.f
	l.mu.Unlock()
	if f == nil {
		return Record{}, errors.New("session log closed")
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off); err != nil {
		return Record{}, fmt.Errorf("reading the session log: %w", err)
	}
	var r Record
	if !parse(buf, &r) {
		return Record{}, fmt.Errorf("reading the session log: no record at offset %d", off)
	}
	return r, nil
}

// Each calls fn for every record of the log, with where its line starts and
// how long it is (for ReadAt).
func (l *Log) Each(fn func(r Record, off int64, n int)) error {
	l.mu.Lock()
	f, size := l.f, l.size
	l.mu.Unlock()
	if f == nil {
		return errors.New("session log closed")
	}
	var r Record
	_, err := eachLine(io.NewSectionReader(f, 0, size), 0, func(off int64, line []byte) {
		if parse(line, &r) {
			fn(r, off, len(line))
		}
	})
	return err
}

// Close syncs the log and gives up the session's lock.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	var err error
	if l.readOnly == nil {
		err = l.f.Sync()
	}
	lockedfile.Unlock(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

// rename gives the log the name p, still owned. Where a locked file can be
// removed it can be renamed, and the lock (the file's) stays taken under
// the new name; elsewhere (Windows renames no open file) the log is
// closed, renamed, and opened and locked again.
func (l *Log) rename(p string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("session log closed")
	}
	if lockedfile.RemoveWhileLocked {
		if err := os.Rename(l.path, p); err != nil {
			return err
		}
		l.path = p
		return nil
	}
	lockedfile.Unlock(l.f)
	l.f.Close()
	l.f = nil // what fails below is left to the stale part's removal, or to the kin that took it
	if err := os.Rename(l.path, p); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if err := lockedfile.TryLock(f); err != nil {
		f.Close()
		return err
	}
	l.f, l.path = f, p
	return nil
}

// Delete removes the log, still holding its lock where the system allows,
// so no other kin can open it halfway through.
func (l *Log) Delete() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("session log closed")
	}
	before := l.idx.dirTime()
	var err error
	if lockedfile.RemoveWhileLocked {
		err = os.Remove(l.path)
	}
	lockedfile.Unlock(l.f)
	l.f.Close()
	l.f = nil
	if !lockedfile.RemoveWhileLocked {
		err = os.Remove(l.path)
	}
	if err == nil {
		l.idx.deleted(l.id, before)
	}
	return err
}
