package boundary

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// A repository's index can record a submodule (a gitlink, mode 160000) at
// a path that .gitmodules does not name, or with no .gitmodules at all:
// git status then still enters that folder once it has a .git and runs
// git there, which reads that .git's config (core.fsmonitor runs a
// command). So the submodules whose .git a command must not plant are the
// index's gitlinks, not only .gitmodules' paths: gitlinks reads them.

// gitlinkMode is a gitlink's mode in the index (octal 160000).
const gitlinkMode = 0o160000

// gitlinkCache keeps each index's gitlinks while the file is unchanged:
// the walk before every command asks, and an index of a large repository
// takes milliseconds to read. Unchanged is the walk cache's rule
// (dirStamp): identity, mtime and ctime, read when both were older than
// racyMargin, on a file system known to keep them. Size and mtime alone
// would not do: a confined command may write the index (git add does), in
// place and to the same size, and set its mtime back (touch -d); its
// ctime it cannot set back.
var gitlinkCache = struct {
	sync.Mutex
	m map[string]gitlinkEntry
}{m: map[string]gitlinkEntry{}}

type gitlinkEntry struct {
	stamp dirStamp
	size  int64
	links []string
}

// gitlinks returns the slash-separated paths of the gitlinks recorded in
// the index file (nil, nil when there is none), or why it could not be
// read: a FIFO, or content that is no index kin knows (then which
// submodules git would enter is unknown).
func gitlinks(index string) ([]string, error) {
	f, err := os.OpenFile(index, os.O_RDONLY|openNonBlock, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w (%s)", ErrNotRegular, fi.Mode().Type())
	}
	read := time.Now()
	stamp, keeps := stampOf(index, fi)
	gitlinkCache.Lock()
	e, ok := gitlinkCache.m[index]
	gitlinkCache.Unlock()
	if ok && keeps && e.stamp == stamp && e.size == fi.Size() {
		return e.links, nil
	}
	// the object names are 20 bytes (SHA-1) or 32 (SHA-256); which one
	// shows in whether the entries parse
	var links []string
	for _, hashLen := range []int{20, 32} {
		if _, err = f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		if links, err = readGitlinks(bufio.NewReaderSize(f, 64<<10), hashLen); err == nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	if keeps && stamp.trusted(read) {
		gitlinkCache.Lock()
		gitlinkCache.m[index] = gitlinkEntry{stamp: stamp, size: fi.Size(), links: links}
		gitlinkCache.Unlock()
	}
	return links, nil
}

// readGitlinks reads an index's entries (versions 2, 3 and 4; git's
// Documentation/gitformat-index) with object names of hashLen bytes and
// returns the paths of its gitlinks. Anything that does not read as such
// an index is an error: entries are read one by one, so a sparse file of
// zeros fails at its first entry, never read whole.
func readGitlinks(r *bufio.Reader, hashLen int) ([]string, error) {
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, errors.New("not a git index (too short)")
	}
	if string(hdr[:4]) != "DIRC" {
		return nil, errors.New("not a git index (no DIRC signature)")
	}
	version := binary.BigEndian.Uint32(hdr[4:8])
	if version < 2 || version > 4 {
		return nil, fmt.Errorf("a git index of version %d, which kin does not read", version)
	}
	count := binary.BigEndian.Uint32(hdr[8:12])
	fixed := 40 + hashLen + 2 // times, ids, mode, size; the name; flags
	buf := make([]byte, fixed+2)
	var links []string
	var prev []byte // version 4: the previous entry's name
	for i := uint32(0); i < count; i++ {
		if _, err := io.ReadFull(r, buf[:fixed]); err != nil {
			return nil, fmt.Errorf("a git index cut short at entry %d", i)
		}
		mode := binary.BigEndian.Uint32(buf[24:28])
		switch mode &^ 0o777 {
		case 0o100000, 0o120000, gitlinkMode, 0o040000: // file, symlink, gitlink, sparse folder
		default:
			return nil, fmt.Errorf("a git index entry of mode %o", mode)
		}
		flags := binary.BigEndian.Uint16(buf[fixed-2 : fixed])
		size := fixed
		if flags&0x4000 != 0 { // extended flags
			if version < 3 {
				return nil, errors.New("a git index entry with extended flags in version 2")
			}
			if _, err := io.ReadFull(r, buf[fixed:fixed+2]); err != nil {
				return nil, fmt.Errorf("a git index cut short at entry %d", i)
			}
			size += 2
		}
		var name []byte
		if version == 4 {
			strip, err := readOffset(r)
			if err != nil || strip > uint64(len(prev)) {
				return nil, fmt.Errorf("a git index entry %d with a bad name", i)
			}
			rest, err := r.ReadBytes(0)
			if err != nil {
				return nil, fmt.Errorf("a git index cut short at entry %d", i)
			}
			name = append(prev[:len(prev)-int(strip):len(prev)-int(strip)], rest[:len(rest)-1]...)
		} else {
			rest, err := r.ReadBytes(0)
			if err != nil {
				return nil, fmt.Errorf("a git index cut short at entry %d", i)
			}
			name = rest[:len(rest)-1]
			if n := int(flags & 0xfff); n < 0xfff && n != len(name) || n == 0xfff && len(name) < n {
				return nil, fmt.Errorf("a git index entry %d whose name is not its length", i)
			}
			// entries are padded with 1 to 8 NULs to a multiple of 8
			pad := 8 - (size+len(name))%8
			if _, err := r.Discard(pad - 1); err != nil {
				return nil, fmt.Errorf("a git index cut short at entry %d", i)
			}
		}
		if len(name) == 0 {
			return nil, fmt.Errorf("a git index entry %d without a name", i)
		}
		if mode&^0o777 == gitlinkMode {
			links = append(links, string(name))
		}
		prev = name
	}
	return links, nil
}

// readOffset reads git's variable-length number of index version 4 (the
// bytes of the previous name to drop).
func readOffset(r *bufio.Reader) (uint64, error) {
	c, err := r.ReadByte()
	if err != nil {
		return 0, err
	}
	v := uint64(c & 0x7f)
	for c&0x80 != 0 {
		if v > 1<<50 {
			return 0, errors.New("too large")
		}
		if c, err = r.ReadByte(); err != nil {
			return 0, err
		}
		v = (v+1)<<7 | uint64(c&0x7f)
	}
	return v, nil
}

// gitlinked makes the .git of every submodule the index of gitDir records
// (in the work tree worktree) impossible to plant where it is missing, as
// submodules does for .gitmodules' paths; an index kin cannot read is a
// gap.
func (p *protector) gitlinked(worktree, gitDir string) {
	// a split index keeps most entries in a shared index beside it
	shared, _ := filepath.Glob(filepath.Join(gitDir, "sharedindex.*"))
	var links []string
	for _, index := range append([]string{filepath.Join(gitDir, "index")}, shared...) {
		l, err := gitlinks(index)
		if err != nil {
			p.gap("kin could not read %s (%v), so it cannot tell which submodules git would enter", index, err)
			return
		}
		links = append(links, l...)
	}
	for _, l := range links {
		sub := filepath.Join(worktree, filepath.FromSlash(l))
		if !Within(worktree, sub) || sub == worktree {
			continue
		}
		if !p.submoduleGit(sub) {
			return
		}
	}
}

// maxSubmodulePlaceholders bounds the placeholders for submodules' missing
// .git (each is a mount of the command's sandbox, and a folder kin makes
// and removes): a repository can record tens of thousands of gitlinks at
// no cost, and at 30,000 the sandbox's command line was too long to start
// anything.
const maxSubmodulePlaceholders = 200

// submoduleGit keeps the .git of the submodule at sub from being planted
// where it is missing, and reports false when there are too many to: then
// it is a gap (the command is asked, saying why), and the rest are left.
func (p *protector) submoduleGit(sub string) bool {
	git := filepath.Join(sub, ".git")
	if _, err := os.Lstat(git); err == nil || p.seen["sub:"+git] {
		return true
	}
	if p.placedSubs >= maxSubmodulePlaceholders {
		p.gap("more than %d submodules in %s are not checked out: kin keeps only the first %d from having a .git planted", maxSubmodulePlaceholders, p.writable, maxSubmodulePlaceholders)
		return false
	}
	p.seen["sub:"+git] = true
	p.placedSubs++
	p.missing(git)
	return true
}
