package sandbox

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Across kin processes (two editor windows on one repository), what a
// command binds must stay standing while it runs, whichever kin made it:
// removing a placeholder's mount point on the host takes the mount away
// inside every sandbox binding it, and the command there could then create
// the protected path. So every kin that binds a path another kin's marker
// records holds it too, in its own marker, and a path goes only when no
// live kin's marker records it any more.
//
// Every change to the markers, and every decision made from them (a hold
// adopting another kin's path and checking that it still stands, a
// release or a sweep removing paths), happens under one lock on kin's run
// folder (runLock, runlock.go), so a release (remove its marker, look for other live
// markers recording the path, remove the path) and an adoption (read the
// markers, record the path, check it stands) never interleave: the
// adopting kin sees either the path recorded and standing, then its own
// record keeps it, or the path gone, then it resolves again. One lock for
// the whole run folder, not one per marker folder: the same path can be
// recorded under different keys by kins with different roots, and a
// release decides from all of them. It is held for a readdir or two and a
// few writes, and, by a release, for its removals (a few rmdirs).

// others is what the markers of other kin processes in a run folder
// record, read under runLock.
type others struct {
	// kinds are the paths any other kin's marker records (a live or a
	// killed one), each with how it goes ("p" or "s\tSHA256").
	kinds map[string]string
	// live are the paths a live other kin's marker records.
	live map[string]bool
	// dead are the markers of killed kins: no process has their pid, or
	// the one that has it started after the marker was last written
	// (ownerAlive).
	dead []string
}

// readOthers reads the other kins' markers in runDir. With none there (a
// single kin) it costs a readdir of the marker folders and one of each
// (this process's own, a folder per key it holds), and reads no file; each
// other kin's marker costs a kill(pid, 0) and, when its pid is in use, an
// lstat and a read of its /proc stat (ownerAlive), besides its own read.
func readOthers(runDir string) others {
	o := others{kinds: map[string]string{}, live: map[string]bool{}}
	if runDir == "" {
		return o
	}
	base := filepath.Join(runDir, "placeholders")
	dirs, _ := os.ReadDir(base)
	self := os.Getpid()
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		dir := filepath.Join(base, d.Name())
		markers, _ := os.ReadDir(dir)
		for _, m := range markers {
			pid, err := strconv.Atoi(m.Name())
			if err != nil || pid == self {
				continue
			}
			name := filepath.Join(dir, m.Name())
			alive := ownerAlive(pid, name)
			if !alive {
				o.dead = append(o.dead, name)
			}
			b, _ := os.ReadFile(name)
			for _, line := range strings.Split(string(b), "\n") {
				if kind, p, ok := parseLine(line); ok {
					o.kinds[p] = kind
					if alive {
						o.live[p] = true
					}
				}
			}
		}
	}
	return o
}

// parseLine splits a marker line ("p\tPATH" or "s\tSHA256\tPATH") into how
// the path goes and the path.
func parseLine(line string) (kind, path string, ok bool) {
	i := strings.LastIndexByte(line, '\t')
	if i < 0 {
		return "", "", false
	}
	kind, path = line[:i], line[i+1:]
	if !filepath.IsAbs(path) {
		return "", "", false
	}
	switch {
	case kind == "p":
	case strings.HasPrefix(kind, "s\t") && len(kind) == 2+64:
	default:
		return "", "", false
	}
	return kind, path, true
}

// removeAs removes p as the kin whose marker records it as kind would: an
// empty placeholder, or a seeded file still holding what was written;
// anything else stays.
func removeAs(kind, p string) {
	if kind == "p" {
		removeEmpty(p)
		return
	}
	if b, err := os.ReadFile(p); err == nil && "s\t"+digest(string(b)) == kind {
		os.Remove(p)
	}
}

// remover is removeAs for one kind, as hold keeps it.
func remover(kind string) func(string) {
	return func(p string) { removeAs(kind, p) }
}

// heldHere reports whether a command of this process holds p, or a
// removal of it is pending (placeholders locked).
func heldHere(p string) bool {
	for _, held := range placeholders.paths {
		if _, ok := held[p]; ok {
			return true
		}
	}
	return false
}

// removal is a path to remove and how.
type removal struct {
	path   string
	remove func(string)
}

// deadRemovals are the removals of what the killed kins' markers in o
// record, as they would have made them, except what a live kin holds
// (recorded in a live marker, or held in this process: a path adopted
// from a killed kin's marker stays until its last holder ends).
// Placeholders locked.
func deadRemovals(o others) []removal {
	var out []removal
	for _, name := range o.dead {
		b, _ := os.ReadFile(name)
		for _, line := range strings.Split(string(b), "\n") {
			if kind, p, ok := parseLine(line); ok && !o.live[p] && !heldHere(p) {
				out = append(out, removal{p, remover(kind)})
			}
		}
	}
	return out
}

// removeAll makes the removals, deepest first: a placeholder another
// command made inside one (a .github/workflows in a .github placeholder)
// goes before the folder holding it.
func removeAll(rs []removal) {
	sort.SliceStable(rs, func(i, j int) bool { return len(rs[i].path) > len(rs[j].path) })
	for _, r := range rs {
		r.remove(r.path)
	}
}

// dropDead removes the killed kins' markers in o once what they record
// went (deadRemovals), and their folders when they held no other marker.
func dropDead(o others) {
	for _, name := range o.dead {
		os.Remove(name)
		os.Remove(filepath.Dir(name))
	}
}
