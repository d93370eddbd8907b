package boundary

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// The walk that decides what a confined command may not change (Protect)
// runs before every command, and looking at every entry of a workspace
// cost 4-6 ms in a repository of 2,000 files and 75-90 ms in one of
// 20,000, most of it matching each name against the runs-later and secret
// lists. What it finds in a folder depends only on the names and kinds of
// the folder's entries, and a folder's ctime changes whenever an entry is
// made, removed or renamed in it, so the outcome of a folder is kept
// (scans) and reused while the folder's identity and times are unchanged:
// a later walk costs one lstat per folder. What the walk reads inside
// files (.git files, .gitmodules, git folders) is read afresh every time.
//
// A folder changed twice within one tick of the file system's clock keeps
// the same times, so a folder whose ctime is not older than racyMargin
// when it is read is not reused (racily clean, as git calls it): read
// again at the next walk. Only file systems known to keep a folder's times
// (statfs, scanFS) are trusted; on any other the walk reads everything as
// before.
var racyMargin = time.Second

// maxScans bounds the kept outcomes, one per folder (about 240 bytes each
// with their paths and names: 60 KB for a repository of 2,000 files, 4.5
// MB for one of 19,000 folders); past it they are all dropped and read
// again. Twice the folders of the largest workspace folder the walk looks
// at whole, so that one at the limit and the other writable folders'
// .git do not drop each other's at every command.
const maxScans = 2 * ProtectMaxFolders

// scan is the outcome of looking at one folder's entries for one writable
// folder (the path relative to it decides what the lists match).
type scan struct {
	stamp dirStamp
	count int        // entries in the folder
	items []scanItem // entries the walk acts on, in the folder's order
}

// scanItem is an entry the walk acts on.
type scanItem struct {
	name string
	idx  int // position in the folder, for the entry limit
	// protect: runs later or looks secret (kept read-only); dir: a folder
	// (not a symlink); git: named .git; gitmodules: named .gitmodules.
	protect, dir, git, gitmodules bool
}

var scans = struct {
	sync.Mutex
	m     map[[2]string]*scan
	fresh int // folders read rather than reused (tests count them)
}{m: map[[2]string]*scan{}}

// scanDir returns the outcome of folder dir below writable folder top,
// reused when dir is unchanged, and false when dir cannot be read.
func (p *protector) scanDir(dir string) (*scan, bool) {
	stamp, ok := p.ahead[dir] // read ahead: on a file system that keeps times
	if !ok {
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			return nil, false
		}
		stamp, ok = stampOf(dir, fi)
	}
	key := [2]string{p.writable, dir}
	if ok {
		scans.Lock()
		s := scans.m[key]
		scans.Unlock()
		if s != nil && s.stamp == stamp {
			return s, true
		}
	}
	read := time.Now()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, false
	}
	s := &scan{stamp: stamp, count: len(entries)}
	// the folder's path below the writable one, taken apart once for all
	// its entries (what the lists match)
	var dirElems []string
	if dir != p.writable {
		rel, _ := filepath.Rel(p.writable, dir)
		dirElems = elemsOf(filepath.ToSlash(rel))
	}
	for i, e := range entries {
		name := e.Name()
		it := scanItem{name: name, idx: i, dir: e.IsDir() && e.Type()&fs.ModeSymlink == 0}
		switch {
		case dir == p.writable && topName(name):
			continue // done by folder, from the list
		case name == ".git":
			it.git = true
		case it.dir && protectSkip[name]:
			continue
		default:
			elems := append(dirElems[:len(dirElems):len(dirElems)], strings.ToLower(name))
			it.protect = runsLaterElems(elems) != "" || secretNameElems(elems) != ""
			it.gitmodules = name == ".gitmodules"
			if !it.protect && !it.gitmodules && !it.dir {
				continue // nothing to do for it
			}
		}
		s.items = append(s.items, it)
	}
	scans.Lock()
	defer scans.Unlock()
	scans.fresh++
	if ok && stamp.trusted(read) {
		if len(scans.m) >= maxScans {
			clear(scans.m)
		}
		scans.m[key] = s
	}
	return s, true
}

// minAhead is the fewest kept folders whose stamps are read ahead: below
// it, the walk reading them one by one costs less than starting readers.
var minAhead = 1000 // a variable for tests

// stampsAhead reads the stamps of the kept folders below writable folder
// top on every core at once (eight at most), before the walk that needs
// them: an lstat per folder is what a later walk costs (24.5 ms at 10,000
// folders one after another on the README's 2-core VM, 17.5 ms read
// ahead). Only stamps of folders that exist, are folders and lie on a
// file system that keeps their times are returned; the walk reads any
// other itself. A stamp read a moment before the walk reaches its folder
// is as good as one read then: it is still read before the kept outcome
// is reused, and a change after it shows at the next walk either way.
func stampsAhead(top string) map[string]dirStamp {
	readers := min(runtime.GOMAXPROCS(0), 8)
	if readers < 2 {
		return nil // one core: the walk reads them as fast
	}
	scans.Lock()
	var dirs []string
	for k := range scans.m {
		if k[0] == top {
			dirs = append(dirs, k[1])
		}
	}
	scans.Unlock()
	if len(dirs) < minAhead {
		return nil
	}
	type read struct {
		stamp dirStamp
		ok    bool
	}
	reads := make([]read, len(dirs))
	var wg sync.WaitGroup
	for r := range readers {
		wg.Go(func() {
			for i := r; i < len(dirs); i += readers {
				if fi, err := os.Lstat(dirs[i]); err == nil && fi.IsDir() {
					reads[i].stamp, reads[i].ok = stampOf(dirs[i], fi)
				}
			}
		})
	}
	wg.Wait()
	ahead := make(map[string]dirStamp, len(dirs))
	for i, d := range dirs {
		if reads[i].ok {
			ahead[d] = reads[i].stamp
		}
	}
	return ahead
}

// walking holds a lock per writable folder whose tree is walked: one walk
// of a folder at a time. A command that comes while another walk of its
// workspace is under way (the one run ahead when a session opens: 0.4 s
// in a workspace of 100,000 entries) waits for it and then reuses what it
// kept, instead of reading every folder again beside it on the same
// cores; two commands at once in one workspace take turns at a walk that
// costs an lstat per folder.
var walking sync.Map // folder → *sync.Mutex

// walkAlone waits for any other walk of folder dir to end and returns
// what lets the next one in.
func walkAlone(dir string) (done func()) {
	m, _ := walking.LoadOrStore(dir, new(sync.Mutex))
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// FoldersRead is how many folders the walk has read rather than reused
// since the process started: what a test of a caller that warms the walk
// (agent.warmCommands) can count.
func FoldersRead() int {
	scans.Lock()
	defer scans.Unlock()
	return scans.fresh
}
