package sandbox

import (
	"context"
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
// one to end removes them, each unless a command of another kin still
// holds it (made it, or binds it as it found it standing: recorded in that
// kin's marker in Config.RunDir, see markers.go); that kin's last holder
// removes it then.
//
// The removal runs in the background once the last holder ended (release),
// so a command's result does not wait for it: each rmdir is a metadata
// write the file system may make wait for its journal (1-3 ms each, seen
// on ext4 with online discard). Settle waits for removals in flight; every
// walk of a workspace and every Command settles first, so no policy is
// built from a placeholder about to go.
var placeholders = struct {
	sync.Mutex
	keys  map[string]int                     // holders by marker folder
	paths map[string]map[string]func(string) // what they hold, and how it goes
	// pending counts removals in flight (release), settled signals each
	// end of one.
	pending int
	settled *sync.Cond
	// seeds are the files this process seeded, with their content
	// (reseed).
	seeds map[string]string
	// leftover are keys no command holds whose removal could not take
	// runLock (another kin stopped while holding it): their paths stay
	// here and in this process's marker, and the next removal retries
	// them (removeHeld).
	leftover map[string]bool
}{keys: map[string]int{}, paths: map[string]map[string]func(string){}, seeds: map[string]string{}, leftover: map[string]bool{}}

func init() { placeholders.settled = sync.NewCond(&placeholders.Mutex) }

// Settle waits until the placeholders and seeded files of every ended
// command of this process that no command holds any more are removed. The
// sandbox settles before every walk of a workspace (Extra) and every
// Command; kin settles before it exits.
func Settle() {
	placeholders.Lock()
	for placeholders.pending > 0 {
		placeholders.settled.Wait()
	}
	placeholders.Unlock()
}

// holdPlaceholders notes that a command is about to hold the missing
// entries of r, and returns what to call once it ended, and whether every
// read-only entry of r still stands (see hold); an error (a *LockError)
// when it holds nothing: the command must not run.
func holdPlaceholders(ctx context.Context, r resolved, runDir string) (func(), bool, error) {
	var paths, existing []string
	for _, e := range r.entries {
		switch e.kind {
		case kindMissing:
			paths = append(paths, e.path)
		case kindReadOnly:
			existing = append(existing, e.path)
		}
	}
	return hold(ctx, paths, markKeys(r, append(paths[:len(paths):len(paths)], existing...)), existing, runDir, func(string) string { return "p" })
}

// noRelease is the release of a command that holds nothing.
func noRelease() {}

// holdSeeds writes the seeded files that do not exist yet (see
// Policy.Seeded) and returns what to call once the command ended: the last
// holder removes each while it still holds what was written. An error (a
// *LockError) when it wrote and holds nothing: the command must not run.
func holdSeeds(ctx context.Context, seeds map[string]string, runDir string) (func(), error) {
	if len(seeds) == 0 {
		return noRelease, nil
	}
	var paths []string
	keys := map[string]string{}
	placeholders.Lock()
	defer placeholders.Unlock()
	// A file is written, and recorded in this process's marker, under
	// one hold of runLock: another kin never sees it standing unrecorded
	// (it would bind it holding nothing, and this kin's release remove it
	// under that kin's command). Taken before anything is written or
	// noted, so that without it there is nothing to undo.
	run := &runLocker{ctx: ctx, dir: runDir}
	defer run.unlock()
	for p := range seeds {
		if _, held := placeholders.paths[filepath.Dir(p)][p]; !held {
			if err := run.lock(); err != nil {
				return nil, err
			}
			break
		}
	}
	for p, content := range seeds {
		placeholders.seeds[p] = content
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
	// runLock is held since before the first write (holdLocked fails only
	// where it has to take it): an error here comes with nothing written
	release, _, err := holdLocked(run, paths, keys, nil, func(p string) string { return "s\t" + digest(seeds[p]) })
	return release, err
}

// reseed returns p's seeded files, with those added that p keeps
// read-only but that are gone: files this process seeded for another
// command, which this command's walk saw standing and which were removed
// once that command ended. They are seeded again (as a placeholder, an
// empty folder, git could not read a commondir and would die).
func reseed(p Policy) map[string]string {
	seeds := p.Seeded
	placeholders.Lock()
	defer placeholders.Unlock()
	for _, ro := range p.ReadOnly {
		content, ok := placeholders.seeds[ro]
		if !ok {
			continue
		}
		if _, err := os.Lstat(ro); err == nil {
			continue
		}
		if _, ok := seeds[ro]; !ok {
			if len(seeds) == len(p.Seeded) {
				seeds = make(map[string]string, len(p.Seeded)+1)
				for k, v := range p.Seeded {
					seeds[k] = v
				}
			}
			seeds[ro] = content
		}
	}
	return seeds
}

// seededHere reports whether this process seeds the file p.
func seededHere(p string) bool {
	placeholders.Lock()
	defer placeholders.Unlock()
	_, ok := placeholders.seeds[filepath.Clean(p)]
	return ok
}

// markKeys names, for each path, the writable folder of r holding it (the
// deepest): holders are counted, and marked across processes, per such
// folder, not per path (a command holds a dozen placeholders, in one or
// two folders).
func markKeys(r resolved, paths []string) map[string]string {
	keys := make(map[string]string, len(paths))
	for _, p := range paths {
		best := deepestWritable(r.entries, p)
		if best == "" {
			best = filepath.Dir(p)
		}
		keys[p] = best
	}
	return keys
}

// hold counts a command as holding paths (each under its key, a marker
// folder), and returns the release: once no command of any kin process
// holds a path, it is removed (in the background, see Settle) as its kind
// says (removeAs: "p" an empty placeholder, "s\tSHA256" a seeded file
// still holding what was written). Each path is also written with its kind
// to this process's marker, so that a kin that was killed before its release leaves a record
// the next kin sweeps (Sweep), and so that another kin's release leaves
// what this one holds standing (markers.go).
//
// existing are paths the command binds as they are (read-only): one that
// is a placeholder or seeded file another command of this process holds
// (its walk saw it standing) is held by this command too, under that
// command's key, and one another kin's marker records is held too, under
// the key keys names for it, recorded in this process's marker as that
// kin records it: either is then not removed while this command runs
// (removing a mount point on the host takes the mount away in every
// sandbox, and the command could then create the path), and the last
// holder of all removes it as the kin that made it would have. standing
// is false when one of existing that no command of this process holds is
// gone: its removal came between the command's resolution and this hold,
// and the command must be resolved again. Both are decided under the
// locks removals take (this process's, and runLock across kins).
//
// err (a *LockError) says runLock was not to be had (another kin seems
// stopped while holding it; or ctx, the turn, ended while waiting): the
// command holds nothing and must not run, since without the lock another
// kin's release could remove what it binds while it runs.
func hold(ctx context.Context, paths []string, keys map[string]string, existing []string, runDir string, kind func(string) string) (release func(), standing bool, err error) {
	placeholders.Lock()
	defer placeholders.Unlock()
	run := &runLocker{ctx: ctx, dir: runDir}
	defer run.unlock()
	return holdLocked(run, paths, keys, existing, kind)
}

// holdLocked is hold with the placeholders locked, taking runLock through
// run when it reads or writes markers. It fails, having changed nothing,
// when runLock is not to be had.
func holdLocked(run *runLocker, paths []string, keys map[string]string, existing []string, kind func(string) string) (release func(), standing bool, err error) {
	runDir := run.dir
	type rec struct {
		path, kind string
		remove     func(string)
	}
	recs := make([]rec, 0, len(paths))
	for _, p := range paths {
		k := kind(p)
		recs = append(recs, rec{p, k, remover(k)})
	}
	mine := map[string]bool{}
	// fail undoes what the hold counted so far (holdRecorded: only
	// counts; markers are written last, under the lock)
	fail := func(err error) (func(), bool, error) {
		for k := range mine {
			placeholders.keys[k]--
		}
		return nil, false, err
	}
	standing = true
	var foreign *others
	readForeign := func() (*others, error) {
		if foreign == nil {
			if err := run.lock(); err != nil {
				return nil, err
			}
			o := readOthers(runDir)
			foreign = &o
		}
		return foreign, nil
	}
	var adopt []rec
	for _, p := range existing {
		if holdRecorded(p, mine) || !standing {
			continue
		}
		// another kin's (then held too), the person's, or gone
		f, err := readForeign()
		if err != nil {
			return fail(err)
		}
		if _, err := os.Lstat(p); err != nil {
			standing = false
			continue
		}
		if k, ok := f.kinds[p]; ok && keys[p] != "" {
			adopt = append(adopt, rec{p, k, remover(k)})
		}
	}
	// A path held inside another kin's placeholder (a .github/workflows
	// in the .github another kin's command holds), or another command's of
	// this process, holds that one too: it goes after this one, by its
	// last holder. Else neither would remove it: that one's release cannot
	// while this one is in it, and this one's does not remove what it does
	// not hold.
	adopting := map[string]bool{}
	for _, r := range adopt {
		adopting[r.path] = true
	}
	ancestors := func(p string) error {
		for d := filepath.Dir(p); d != filepath.Dir(d); d = filepath.Dir(d) {
			if adopting[d] {
				continue
			}
			here := holdRecorded(d, mine) // one of this process's: its commands' count
			f, err := readForeign()
			if err != nil {
				return err
			}
			k, ok := f.kinds[d]
			if here || !ok {
				continue
			}
			if _, err := os.Lstat(d); err != nil {
				standing = false // gone since the resolution: resolved again
				return nil
			}
			adopting[d] = true
			keys[d] = keys[p]
			adopt = append(adopt, rec{d, k, remover(k)})
		}
		return nil
	}
	for _, r := range adopt[:len(adopt):len(adopt)] {
		if standing {
			if err := ancestors(r.path); err != nil {
				return fail(err)
			}
		}
	}
	checked := map[string]bool{}
	for _, p := range paths {
		if !standing || kind(p) != "p" {
			break
		}
		// Its folder must still stand: one removed since the resolution
		// (another command's placeholder) would be made again by
		// bubblewrap, recorded by no one, and stay.
		if dir := filepath.Dir(p); !checked[dir] {
			checked[dir] = true
			if err := run.lock(); err != nil {
				return fail(err)
			}
			if _, err := os.Lstat(dir); err != nil {
				standing = false // resolved again: the placeholder goes where the path begins to be missing
				break
			}
		}
		if err := ancestors(p); err != nil {
			return fail(err)
		}
	}
	if standing {
		recs = append(recs, adopt...)
	}
	if len(recs) == 0 && len(mine) == 0 {
		return noRelease, standing, nil
	}
	// Sweep and a release remove marker folders under runLock: taken
	// before anything is counted here when a marker is to be written (a
	// path not recorded under its key yet, which is also the case of
	// every key no command of this process holds)
	for _, r := range recs {
		if _, recorded := placeholders.paths[keys[r.path]][r.path]; !recorded {
			if err := run.lock(); err != nil {
				return fail(err)
			}
			break
		}
	}
	// What this process's marker does not record yet, per key: written
	// in one append, and a path a running command of this process already
	// holds is recorded already (a command holds a dozen placeholders, and
	// a write each was most of kin's own cost of starting one).
	lines := map[string][]string{}
	first := map[string]bool{} // keys no command of this process held: the marker is made anew
	for _, r := range recs {
		k := keys[r.path]
		if !mine[k] {
			mine[k] = true
			// a key whose removal is pending (no holder, paths still
			// recorded) keeps its marker: it is appended to
			if placeholders.keys[k] == 0 && placeholders.paths[k] == nil {
				first[k] = true
			}
			placeholders.keys[k]++
		}
		if placeholders.paths[k] == nil {
			placeholders.paths[k] = map[string]func(string){}
		}
		if _, recorded := placeholders.paths[k][r.path]; !recorded {
			lines[k] = append(lines[k], r.kind+"\t"+r.path)
		}
		placeholders.paths[k][r.path] = r.remove
	}
	for k := range mine {
		if first[k] {
			markWith(runDir, k, lines[k])
		} else {
			journal(runDir, k, lines[k])
		}
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			placeholders.Lock()
			defer placeholders.Unlock()
			var last []string // keys this command was the last holder of
			for k := range mine {
				if placeholders.keys[k]--; placeholders.keys[k] <= 0 {
					last = append(last, k)
				}
			}
			if len(last) == 0 {
				return
			}
			placeholders.pending++
			go removeHeld(last, runDir)
		})
	}
	return release, standing, nil
}

// holdRecorded counts the command (mine: the keys it holds) as a holder of
// every key under which this process recorded p (a placeholder or seeded
// file of another of its commands), and reports whether there was one.
// Called with placeholders locked.
func holdRecorded(p string, mine map[string]bool) bool {
	found := false
	for k, held := range placeholders.paths {
		if _, ok := held[p]; ok {
			found = true
			if !mine[k] {
				mine[k] = true
				placeholders.keys[k]++
			}
		}
	}
	return found
}

// removeHeld removes what is held under keys, each unless a command took
// it up again meanwhile (or another removal went first), and tells Settle.
// A path another live kin records (it binds it too), or that a command of
// this process holds under another key, stays: its last holder removes it.
// What killed kins recorded goes too (as Sweep). The locks are held
// throughout: a command holding a key meanwhile, here or in another kin,
// waits, and finds it either still held or gone.
//
// Without runLock (another kin seems stopped while holding it: it waits
// lockWait at most, see runlock.go) nothing is removed: the keys stay, as
// leftover, with their paths here and in this process's marker, so no
// other kin removes them either; the next removal of this process retries
// them, and once this process ended, another kin's sweep or release
// removes them as a killed kin's.
func removeHeld(keys []string, runDir string) {
	placeholders.Lock()
	defer placeholders.Unlock()
	defer placeholders.settled.Broadcast()
	defer func() { placeholders.pending-- }()
	for k := range placeholders.leftover {
		delete(placeholders.leftover, k) // held again since, or retried now
		keys = append(keys, k)
	}
	var dropped []string
	seen := map[string]bool{}
	for _, k := range keys {
		if _, ok := placeholders.paths[k]; !ok || placeholders.keys[k] > 0 || seen[k] {
			continue
		}
		seen[k] = true
		dropped = append(dropped, k)
	}
	if len(dropped) == 0 {
		return
	}
	unlock, err := runLock(context.Background(), runDir, lockWait)
	if err != nil {
		for _, k := range dropped {
			placeholders.leftover[k] = true
		}
		return
	}
	defer unlock()
	var gone []removal
	for _, k := range dropped {
		for p, remove := range placeholders.paths[k] {
			gone = append(gone, removal{p, remove})
		}
		delete(placeholders.keys, k)
		delete(placeholders.paths, k)
	}
	o := readOthers(runDir)
	for _, k := range dropped {
		unmark(runDir, k)
	}
	rs := deadRemovals(o)
	for _, r := range gone {
		if !o.live[r.path] && !heldHere(r.path) {
			rs = append(rs, r)
		}
	}
	removeAll(rs)
	dropDead(o)
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
// commands ended) left of their placeholders and seeded files: what their
// markers in runDir record is removed as a release would (an empty
// placeholder, a seeded file still holding what was written; anything
// else stays), unless a live kin holds it (its marker records it too: it
// binds it, and removes it once it ended). Without it, a placeholder stays
// in the workspace as an empty folder where a file belongs (an .mcp.json
// folder kin then cannot read as configuration). The records are kin's
// own, in its private run folder.
func Sweep(runDir string) {
	Settle() // this process's own removals first: its marker goes with them
	if runDir == "" {
		return
	}
	dirs, err := os.ReadDir(filepath.Join(runDir, "placeholders"))
	if err != nil || len(dirs) == 0 {
		return
	}
	placeholders.Lock()
	defer placeholders.Unlock()
	unlock, err := runLock(context.Background(), runDir, sweepWait)
	if err != nil {
		return // the markers stay: a later release or sweep removes what they record
	}
	defer unlock()
	o := readOthers(runDir)
	removeAll(deadRemovals(o))
	dropDead(o)
	for _, d := range dirs {
		os.Remove(filepath.Join(runDir, "placeholders", d.Name())) // an emptied one
	}
}

// unmark removes this process's marker for key in runDir. The folder
// stays (Sweep removes it when it is empty): the next command in it would
// make it again, a metadata write that costs as much as the rest of
// recording its placeholders.
func unmark(runDir, key string) {
	if runDir == "" {
		return
	}
	os.Remove(filepath.Join(markerDir(runDir, key), strconv.Itoa(os.Getpid())))
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
