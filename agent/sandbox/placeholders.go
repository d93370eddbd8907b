package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// placeholders counts the commands of this process whose sandbox holds
// placeholders (paths that must not be created: bubblewrap makes an empty
// mount point for each on the host) or seeded files, per folder. The last
// one to end removes them, unless a command of another kin still holds
// that folder (a marker per process in Config.RunDir).
var placeholders = struct {
	sync.Mutex
	keys  map[string]int                     // holders by marker folder
	paths map[string]map[string]func(string) // what they hold, and how it goes
}{keys: map[string]int{}, paths: map[string]map[string]func(string){}}

// holdPlaceholders notes that a command is about to hold the missing
// entries of r, and returns what to call once it ended.
func holdPlaceholders(r resolved, runDir string) func() {
	var paths []string
	for _, e := range r.entries {
		if e.kind == kindMissing {
			paths = append(paths, e.path)
		}
	}
	return hold(paths, markKeys(r, paths), runDir, func(string) string { return "p" }, func(p string) { removeEmpty(p) })
}

// holdSeeds writes the seeded files that do not exist yet (see
// Policy.Seeded) and returns what to call once the command ended: the last
// holder removes each while it still holds what was written.
func holdSeeds(seeds map[string]string, runDir string) func() {
	if len(seeds) == 0 {
		return func() {}
	}
	var paths []string
	keys := map[string]string{}
	placeholders.Lock()
	for p, content := range seeds {
		if _, held := placeholders.paths[filepath.Dir(p)][p]; !held {
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				continue // there is one (made meanwhile): it is kept read-only
			}
			_, _ = f.WriteString(content)
			f.Close()
		}
		paths = append(paths, p)
		keys[p] = filepath.Dir(p)
	}
	placeholders.Unlock()
	return hold(paths, keys, runDir, func(p string) string { return "s\t" + digest(seeds[p]) }, func(p string) {
		if b, err := os.ReadFile(p); err == nil && string(b) == seeds[p] {
			os.Remove(p)
		}
	})
}

// markKeys names, for each path, the writable folder of r holding it (the
// deepest): holders are counted, and marked across processes, per such
// folder, not per path (a command holds a dozen placeholders, in one or
// two folders).
func markKeys(r resolved, paths []string) map[string]string {
	keys := make(map[string]string, len(paths))
	for _, p := range paths {
		best := ""
		for _, e := range r.entries {
			if e.kind == kindWritable && within(e.path, p) && e.path != p && len(e.path) > len(best) {
				best = e.path
			}
		}
		if best == "" {
			best = filepath.Dir(p)
		}
		keys[p] = best
	}
	return keys
}

// hold counts a command as holding paths (each under its key, a marker
// folder), and returns the release: once no command of any kin process
// holds a key, remove is called for every path held under it. Each path
// is also written to this process's marker (kind says how it goes), so
// that a kin that was killed before its release leaves a record the next
// kin sweeps (Sweep).
func hold(paths []string, keys map[string]string, runDir string, kind func(string) string, remove func(string)) func() {
	if len(paths) == 0 {
		return func() {}
	}
	mine := map[string]bool{}
	// What this process's marker does not record yet, per key: written
	// in one append, and a path a running command of this process already
	// holds is recorded already (a command holds a dozen placeholders, and
	// a write each was most of kin's own cost of starting one).
	lines := map[string][]string{}
	first := map[string]bool{} // keys no command of this process held: the marker is made anew
	placeholders.Lock()
	for _, p := range paths {
		k := keys[p]
		if !mine[k] {
			mine[k] = true
			if placeholders.keys[k] == 0 {
				first[k] = true
			}
			placeholders.keys[k]++
		}
		if placeholders.paths[k] == nil {
			placeholders.paths[k] = map[string]func(string){}
		}
		if _, recorded := placeholders.paths[k][p]; !recorded {
			lines[k] = append(lines[k], kind(p)+"\t"+p)
		}
		placeholders.paths[k][p] = remove
	}
	for k := range mine {
		if first[k] {
			markWith(runDir, k, lines[k])
		} else {
			journal(runDir, k, lines[k])
		}
	}
	placeholders.Unlock()
	return func() {
		placeholders.Lock()
		defer placeholders.Unlock()
		for k := range mine {
			if placeholders.keys[k]--; placeholders.keys[k] > 0 {
				continue
			}
			delete(placeholders.keys, k)
			held := placeholders.paths[k]
			delete(placeholders.paths, k)
			if unmark(runDir, k) {
				for p, rm := range held {
					rm(p)
				}
			}
		}
	}
}

// removeEmpty removes what bubblewrap made for a placeholder: an empty
// file or an empty folder; anything with content stays.
func removeEmpty(p string) {
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
	case fi.Mode().IsRegular() && fi.Size() == 0:
		os.Remove(p)
	case fi.IsDir():
		os.Remove(p) // fails unless empty
	}
}

// markerDir is the folder of the markers for key in runDir.
func markerDir(runDir, key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(runDir, "placeholders", hex.EncodeToString(sum[:12]))
}

// digest names a seeded file's content in a marker.
func digest(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

// journal appends lines to this process's marker for key, in one write.
func journal(runDir, key string, lines []string) {
	if runDir == "" || len(lines) == 0 {
		return
	}
	f, err := os.OpenFile(filepath.Join(markerDir(runDir, key), strconv.Itoa(os.Getpid())), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	_, _ = f.WriteString(strings.Join(lines, "\n") + "\n")
	f.Close()
}

// Sweep removes what kin processes that are gone (killed before their
// commands ended) left of their placeholders and seeded files: each marker
// folder in runDir none of whose processes is alive has its recorded paths
// removed as a release would (an empty placeholder, a seeded file still
// holding what was written; anything else stays). Without it, a
// placeholder stays in the workspace as an empty folder where a file
// belongs (an .mcp.json folder kin then cannot read as configuration).
// The records are kin's own, in its private run folder.
func Sweep(runDir string) {
	if runDir == "" {
		return
	}
	base := filepath.Join(runDir, "placeholders")
	dirs, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, d := range dirs {
		dir := filepath.Join(base, d.Name())
		markers, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		live := false
		for _, m := range markers {
			if pid, err := strconv.Atoi(m.Name()); err == nil && (pid == os.Getpid() || processAlive(pid)) {
				live = true
			}
		}
		if live {
			continue // a live kin holds it and releases it itself
		}
		for _, m := range markers {
			b, _ := os.ReadFile(filepath.Join(dir, m.Name()))
			for _, line := range strings.Split(string(b), "\n") {
				sweepLine(line)
			}
			os.Remove(filepath.Join(dir, m.Name()))
		}
		os.Remove(dir)
	}
}

// sweepLine removes one recorded path ("p\tPATH" or "s\tSHA256\tPATH").
func sweepLine(line string) {
	kind, rest, ok := strings.Cut(line, "\t")
	if !ok || !filepath.IsAbs(rest) && kind == "p" {
		return
	}
	switch kind {
	case "p":
		removeEmpty(rest)
	case "s":
		sum, p, ok := strings.Cut(rest, "\t")
		if !ok || !filepath.IsAbs(p) {
			return
		}
		if b, err := os.ReadFile(p); err == nil && digest(string(b)) == sum {
			os.Remove(p)
		}
	}
}

// unmark removes this process's marker for a folder holding placeholders
// in runDir, and reports whether no live process holds placeholders there
// any more (true without a runDir).
func unmark(runDir, p string) bool {
	if runDir == "" {
		return true
	}
	dir := markerDir(runDir, p)
	os.Remove(filepath.Join(dir, strconv.Itoa(os.Getpid())))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return true
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err == nil && processAlive(pid) {
			return false
		}
		os.Remove(filepath.Join(dir, e.Name()))
	}
	// The folder stays: another kin may be making its marker in it right
	// now (removing it between that kin's mkdir and its write would lose
	// the marker, and with it that kin's hold). Sweep removes folders no
	// live kin holds.
	return true
}

// markWith makes this process's marker for a folder holding placeholders,
// holding lines (the paths it records) from the start: one write.
func markWith(runDir, key string, lines []string) {
	if runDir == "" {
		return
	}
	dir := markerDir(runDir, key)
	content := ""
	if len(lines) > 0 {
		content = strings.Join(lines, "\n") + "\n"
	}
	me := filepath.Join(dir, strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(me, []byte(content), 0o600); err != nil {
		// the first command in this folder, or a Sweep removed it
		if os.MkdirAll(dir, 0o700) == nil {
			_ = os.WriteFile(me, []byte(content), 0o600)
		}
	}
}
