package boundary

import (
	"path/filepath"
)

// MaxProtectedMounts bounds what a command's sandbox mounts for the
// protection: each protected path is a mount, and so is each folder above
// one that makes things run later (package sandbox pins them: a mount
// goes with a renamed folder). bubblewrap refuses a command line of over
// 9,000 arguments (three a mount), and every mount makes the later ones
// slower; a repository with 3,100 .env files (free to ship, or for a
// command to make) kept every command from starting ("bwrap: Exceeded
// maximum number of arguments 9000").
const MaxProtectedMounts = 1000

// maxMounts is MaxProtectedMounts, lowered only by tests.
var maxMounts = MaxProtectedMounts

// bound keeps the protection within maxMounts: past it, the read-only
// files that are so only for their secret's name go first, then the rest
// from the last found; what is left out is a gap (the command is asked,
// saying why), never silently dropped.
func (p *protector) bound() {
	n := p.mounts()
	if n <= maxMounts {
		return
	}
	total := len(p.out.ReadOnly)
	// secret-named files first, from the last
	for i := len(p.out.ReadOnly) - 1; i >= 0 && n > maxMounts; i-- {
		if !p.runsLaterPath(p.out.ReadOnly[i]) {
			p.out.ReadOnly = append(p.out.ReadOnly[:i], p.out.ReadOnly[i+1:]...)
			n--
		}
	}
	// then anything read-only, and placeholders, from the last found
	// (each goes with one mount at least: as many as are over at once)
	for n > maxMounts && len(p.out.ReadOnly) > 0 {
		p.out.ReadOnly = p.out.ReadOnly[:len(p.out.ReadOnly)-min(n-maxMounts, len(p.out.ReadOnly))]
		n = p.mounts()
	}
	for n > maxMounts && len(p.out.Missing) > 0 {
		p.out.Missing = p.out.Missing[:len(p.out.Missing)-min(n-maxMounts, len(p.out.Missing))]
		n = p.mounts()
	}
	p.gap("the workspace has more protected paths than kin can mount for a command (%d): %d of the %d read-only paths are, the rest (secret-named files first) are writable to it", maxMounts, len(p.out.ReadOnly), total)
}

// mounts counts what the sandbox will mount for the protection: every
// path, and every folder between a writable folder and a path in it that
// makes things run later (counted up to the writable folder: at least as
// many as the sandbox pins).
func (p *protector) mounts() int {
	n := len(p.out.ReadOnly) + len(p.out.Missing) + len(p.out.Seeded) + len(p.out.Pins)
	above := map[string]bool{}
	count := func(path string) {
		w := p.writableOf(path)
		if w == "" {
			return
		}
		for d := filepath.Dir(path); d != w && Within(w, d) && !above[d]; d = filepath.Dir(d) {
			above[d] = true
			n++
		}
	}
	for _, r := range p.out.ReadOnly {
		if p.runsLaterPath(r) {
			count(r)
		}
	}
	for _, m := range p.out.Missing {
		count(m)
	}
	for m := range p.out.Seeded {
		count(m)
	}
	for _, m := range p.out.Pins {
		count(m)
	}
	return n
}

// writableOf is the deepest writable folder holding path ("" for none).
func (p *protector) writableOf(path string) string {
	best := ""
	for _, w := range p.all {
		if Within(w, path) && w != path && len(w) > len(best) {
			best = w
		}
	}
	return best
}

// runsLaterPath reports whether a protected path is so because it makes
// things run later, not only for its secret's name.
func (p *protector) runsLaterPath(path string) bool {
	w := p.writableOf(path)
	if w == "" {
		return true
	}
	rel, err := filepath.Rel(w, path)
	return err != nil || RunsLater(filepath.ToSlash(rel)) != ""
}
