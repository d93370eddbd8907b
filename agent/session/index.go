package session

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kin-dev/kin/agent/lockedfile"
)

// The index is a journal of summary changes beside the logs
// (sessions/index.tsv), so listing sessions never reads a log: one line
// per change, appended by whichever kin made it, replayed by readers. It is
// only a cache. A missing or unreadable index is rebuilt from the logs, and
// the folder's modification time, noted in the journal, tells when logs
// appeared or vanished without a line (an older kin, a crash, a copy): then
// only the names are compared and only new logs are read.
//
// Lines (tab-separated, strings Go-quoted):
//
//	r <id> <created> <updated> <turns> <roots> <title> [<parent>]   a whole row
//	                                                     (parent: a subagent's session's)
//	o <id> <origin>                                      the row's origin (after its r line, when it has one)
//	t <id> <time>                                        a turn ended
//	n <id> <time> <title>                                renamed
//	d <id>                                               deleted
//	m <time>                                             the folder's mtime the rows agree with
//
// A reader skips the lines it does not know, so an older kin reads this
// journal (without origins) and this kin reads an older one (rows without
// an o line have none).
//
// Times are Unix nanoseconds. Appends take index.lock shared; a rewrite (to
// drop replaced lines) takes it exclusively.
const (
	indexName     = "index.tsv"
	indexLockName = "index.lock"
	indexHeader   = "# kin session index v1\n"
)

type index struct {
	dir string

	// mu guards everything below.
	mu     sync.Mutex
	rows   rowSet
	sorted []Info      // rows newest first; nil when rows changed
	fi     os.FileInfo // the journal read so far
	off    int64       // where the unread lines start
	lines  int         // lines read, to know when to rewrite
	mtime  time.Time   // the folder's mtime the rows agree with
}

func newIndex(dir string) *index { return &index{dir: dir} }

func (x *index) journal() string { return filepath.Join(x.dir, indexName) }

// dirTime is the sessions folder's modification time (zero when missing).
func (x *index) dirTime() time.Time {
	st, err := os.Stat(x.dir)
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}

// rowLine is a whole row: its r line, and its o line when it has an
// origin (a line of its own, which older kins skip).
func rowLine(i Info) string {
	f := []string{"r", i.SessionID, nanos(i.CreatedAt), nanos(i.UpdatedAt), strconv.Itoa(i.Turns),
		strconv.Quote(strings.Join(i.roots(), "\x00")), strconv.Quote(i.Title)}
	if validID(i.ParentID) {
		// An eighth field: a kin that knows only seven skips the row, so
		// it lists no subagent's session among the person's.
		f = append(f, i.ParentID)
	}
	line := strings.Join(f, "\t") + "\n"
	if i.Origin != "" {
		line += "o\t" + i.SessionID + "\t" + strconv.Quote(i.Origin) + "\n"
	}
	return line
}

func nanos(t time.Time) string {
	if t.IsZero() {
		return "0"
	}
	return strconv.FormatInt(t.UnixNano(), 10)
}

func fromNanos(s string) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// The changes kin makes. They only append to the journal; rows in memory
// follow when the journal is next read, so a line is applied exactly once.

func (x *index) created(i Info, before time.Time) {
	x.append(rowLine(i))
	x.ownChange(before)
}

func (x *index) refresh(i Info) { x.append(rowLine(i)) }

func (x *index) turnEnded(id string, t time.Time) {
	x.append("t\t" + id + "\t" + nanos(t) + "\n")
}

func (x *index) renamed(id string, t time.Time, title string) {
	x.append("n\t" + id + "\t" + nanos(t) + "\t" + strconv.Quote(title) + "\n")
}

func (x *index) deleted(id string, before time.Time) {
	x.append("d\t" + id + "\n")
	x.ownChange(before)
}

// ownChange notes that this kin's own create or delete changed the folder:
// when the rows agreed with the folder just before, they still do.
func (x *index) ownChange(before time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if before.IsZero() || !before.Equal(x.mtime) {
		return
	}
	if now := x.dirTime(); !now.IsZero() {
		x.mtime = now
		x.appendLocked("m\t" + nanos(now) + "\n")
	}
}

func (x *index) append(lines string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.appendLocked(lines)
}

// appendLocked appends lines in one write. The index is a cache: a failure
// only means the next reader has more to rebuild.
func (x *index) appendLocked(lines string) {
	lf := x.lock(lockedfile.LockShared)
	if lf == nil {
		return
	}
	defer lf.Close()
	f, err := os.OpenFile(x.journal(), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	// A line torn by a crash or a power cut would take these lines into
	// it, and the reader would drop them with it: they start a line of
	// their own. (Appends are single writes under the shared lock, so a
	// last byte that is not a newline is such a tear, never another kin's
	// line half written.)
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], fi.Size()-1); err == nil && last[0] != '\n' {
			lines = "\n" + lines
		}
	}
	_, _ = f.WriteString(lines)
	f.Close()
}

// lock opens index.lock and locks it; closing the file unlocks it. The
// lock file is never removed: two kins must lock the same file.
func (x *index) lock(how func(*os.File) error) *os.File {
	f, err := os.OpenFile(filepath.Join(x.dir, indexLockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil
	}
	if how(f) != nil {
		f.Close()
		return nil
	}
	return f
}

// list returns the rows newest first, catching up with the journal and the
// folder first.
func (x *index) list() ([]Info, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.catchUp()
	dt := x.dirTime()
	if dt.IsZero() {
		if _, err := os.Stat(x.dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, nil
	}
	if !dt.Equal(x.mtime) {
		if err := x.reconcile(dt); err != nil {
			return nil, err
		}
	}
	if x.lines > 2*x.rows.len()+256 {
		x.rewrite()
	}
	if x.sorted == nil {
		x.sorted = x.rows.newestFirst()
	}
	return x.sorted, nil
}

// catchUp reads the journal's new lines, or all of it when it was replaced.
// The journal is small (one line per session after a rewrite), so the new
// part is read whole.
func (x *index) catchUp() {
	f, err := os.Open(x.journal())
	if err != nil {
		if x.fi != nil { // removed: start over from the logs
			x.reset()
		}
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return
	}
	fresh := x.fi == nil || !os.SameFile(fi, x.fi) || fi.Size() < x.off
	if fresh {
		x.reset()
	}
	x.fi = fi
	if fi.Size() == x.off {
		return
	}
	// One string for all the new lines: rows keep substrings of it, and no
	// line costs an allocation of its own.
	var sb strings.Builder
	sb.Grow(int(fi.Size() - x.off))
	if _, err := io.Copy(&sb, io.NewSectionReader(f, x.off, fi.Size()-x.off)); err != nil {
		return
	}
	text := sb.String()
	if fresh {
		// Room for exactly the rows the journal has (a row's r line starts
		// a line; the first line is the header): growing by appends would
		// copy them, and an estimate from the size alone may fall short.
		x.rows.grow(strings.Count(text, "\nr\t") + 1)
	}
	for len(text) > 0 {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			break // being written: read it next time
		}
		x.apply(text[:i])
		x.off += int64(i + 1)
		x.lines++
		text = text[i+1:]
	}
}

func (x *index) reset() {
	x.rows, x.sorted, x.fi, x.off, x.lines, x.mtime = rowSet{}, nil, nil, 0, 0, time.Time{}
}

// fields splits a journal line at its tabs, into out (no allocation).
func fields(line string, out []string) []string {
	out = out[:0]
	for {
		i := strings.IndexByte(line, '\t')
		if i < 0 {
			return append(out, line)
		}
		out = append(out, line[:i])
		line = line[i+1:]
	}
}

// unquote reads a Go-quoted string; one without escapes is a substring.
func unquote(s string) (string, error) {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' && strings.IndexByte(s, '\\') < 0 {
		return s[1 : len(s)-1], nil
	}
	return strconv.Unquote(s)
}

func (x *index) apply(line string) {
	var buf [8]string
	f := fields(line, buf[:0])
	switch {
	case f[0] == "r" && (len(f) == 7 || len(f) == 8):
		roots, err1 := unquote(f[5])
		title, err2 := unquote(f[6])
		turns, err3 := strconv.Atoi(f[4])
		if err1 != nil || err2 != nil || err3 != nil || !validID(f[1]) {
			return
		}
		i := Info{SessionID: f[1], Title: title, CreatedAt: fromNanos(f[2]), UpdatedAt: fromNanos(f[3]), Turns: turns}
		// One lookup per row: a cold list of 10,000 rows spent more in
		// the map than in parsing when every use looked the row up.
		old := x.rows.get(i.SessionID)
		switch {
		case len(f) == 8 && validID(f[7]):
			i.ParentID = f[7]
		case len(f) == 7 && old != nil:
			// A session's parent never changes: a row an older kin wrote
			// again (it does not know parents) keeps the one known.
			i.ParentID = old.ParentID
		}
		if first, rest, more := strings.Cut(roots, "\x00"); more {
			i.setRoots(append([]string{first}, strings.Split(rest, "\x00")...))
		} else {
			i.Cwd = first
		}
		if old == nil {
			x.rows.add(i)
			break
		}
		i.Origin = old.Origin // on its own line, which follows when it changed
		*x.rows.edit(i.SessionID) = i
	case f[0] == "o" && len(f) == 3:
		origin, err := unquote(f[2])
		if err != nil || !ValidOrigin(origin) {
			return
		}
		if i := x.rows.edit(f[1]); i != nil {
			i.Origin = origin
		}
	case f[0] == "t" && len(f) == 3:
		if i := x.rows.edit(f[1]); i != nil {
			i.Turns++
			if t := fromNanos(f[2]); t.After(i.UpdatedAt) {
				i.UpdatedAt = t
			}
		}
	case f[0] == "n" && len(f) == 4:
		title, err := unquote(f[3])
		if err != nil {
			return
		}
		if i := x.rows.edit(f[1]); i != nil {
			i.Title = title
			if t := fromNanos(f[2]); t.After(i.UpdatedAt) {
				i.UpdatedAt = t
			}
		}
	case f[0] == "d" && len(f) == 2:
		x.rows.del(f[1])
	case f[0] == "m" && len(f) == 2:
		x.mtime = fromNanos(f[1])
		return
	default:
		return
	}
	x.sorted = nil
}

// reconcile compares the rows with the logs in the folder: a log without a
// row is read (only its summary), a row without a log goes.
func (x *index) reconcile(dt time.Time) error {
	d, err := os.Open(x.dir)
	if err != nil {
		return err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return err
	}
	var out strings.Builder
	added := 0
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		if isPart(name) {
			removeStalePart(filepath.Join(x.dir, name))
			continue
		}
		id, ok := strings.CutSuffix(name, ".jsonl")
		if !ok || !validID(id) {
			continue
		}
		seen[id] = true
		if x.rows.get(id) != nil {
			continue
		}
		if info, ok := summarize(filepath.Join(x.dir, name), id); ok {
			x.rows.put(info)
			out.WriteString(rowLine(info))
			added++
		}
	}
	for _, id := range x.rows.ids() {
		if !seen[id] {
			x.rows.del(id)
			out.WriteString("d\t" + id + "\n")
		}
	}
	x.sorted, x.mtime = nil, dt
	out.WriteString("m\t" + nanos(dt) + "\n")
	x.appendLocked(out.String())
	if added > x.rows.len()/2 && added > 64 {
		x.rewrite() // a rebuild: leave a snapshot, newest first, for the next cold list
	}
	return nil
}

// rewrite replaces the journal with one line per row, under the exclusive
// lock so no append is lost.
func (x *index) rewrite() {
	lf := x.lock(lockedfile.LockExclusive)
	if lf == nil {
		return
	}
	defer lf.Close()
	x.catchUp()
	before := x.dirTime()
	var b strings.Builder
	b.WriteString(indexHeader)
	x.sorted = x.rows.newestFirst()
	for _, i := range x.sorted {
		b.WriteString(rowLine(i))
	}
	b.WriteString("m\t" + nanos(x.mtime) + "\n")
	if lockedfile.ReplaceFile(x.journal(), []byte(b.String()), lockedfile.Options{Perm: 0o600}) != nil {
		return
	}
	x.fi, x.off, x.lines = nil, 0, 0
	if fi, err := os.Stat(x.journal()); err == nil {
		x.fi, x.off, x.lines = fi, fi.Size(), x.rows.len()+1
	}
	// The new file changed the folder's mtime; nothing else did when the
	// rows agreed with it just before.
	if before.Equal(x.mtime) {
		if now := x.dirTime(); !now.IsZero() {
			x.mtime = now
			if f, err := os.OpenFile(x.journal(), os.O_WRONLY|os.O_APPEND, 0); err == nil {
				if _, err := f.WriteString("m\t" + nanos(now) + "\n"); err == nil {
					x.off += int64(len("m\t" + nanos(now) + "\n"))
					x.lines++
				}
				f.Close()
			}
		}
	}
}

// isPart reports whether name is a session still being written whole
// (Store.CreateWith): a hidden name a reader never takes for a session.
func isPart(name string) bool {
	id, ok := strings.CutSuffix(strings.TrimPrefix(name, "."), ".jsonl.part")
	return ok && strings.HasPrefix(name, ".") && validID(id)
}

// removeStalePart removes what a kin stopped while writing a session whole
// left: a part no kin holds (its writer holds its lock to the end) and
// that nothing wrote for a while (a writer takes the lock just after
// making the file).
func removeStalePart(path string) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return
	}
	if st, err := f.Stat(); err != nil || time.Since(st.ModTime()) < stalePart || lockedfile.TryLock(f) != nil {
		f.Close()
		return
	}
	if lockedfile.RemoveWhileLocked {
		_ = os.Remove(path)
	}
	lockedfile.Unlock(f)
	f.Close()
	if !lockedfile.RemoveWhileLocked {
		_ = os.Remove(path) // (Windows deletes no open file)
	}
}

// stalePart is how long a part nobody holds stays before it is removed.
const stalePart = time.Minute
