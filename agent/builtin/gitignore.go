package builtin

import (
	"bufio"
	"bytes"
	"path"
	"path/filepath"
	"strings"

	"github.com/kin-dev/kin/agent/boundary"
)

// ignoreRule is one .gitignore line.
type ignoreRule struct {
	elems   []string // pattern elements; unanchored patterns start with "**"
	neg     bool     // "!pattern": re-include
	dirOnly bool     // "pattern/": directories only
}

// ignoreSet is the rules of one .gitignore file, relative to its directory.
type ignoreSet struct {
	depth int // how many path elements below the walk's root its directory is
	rules []ignoreRule
}

// parseGitignore reads gitignore syntax (the subset git documents: blank
// lines and # comments, \ escapes, ! negation, trailing / for directories,
// a leading or middle / anchoring, *, ?, [...] and **).
func parseGitignore(data []byte, depth int) *ignoreSet {
	set := &ignoreSet{depth: depth}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		// trailing spaces are ignored unless escaped
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, "\\ ") {
			line = line[:len(line)-1]
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var r ignoreRule
		if strings.HasPrefix(line, "!") {
			r.neg = true
			line = line[1:]
		} else if strings.HasPrefix(line, "\\!") || strings.HasPrefix(line, "\\#") {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		anchored := strings.Contains(line, "/")
		line = strings.ReplaceAll(line, "[!", "[^")
		r.elems = splitPattern(line)
		if len(r.elems) == 0 {
			continue
		}
		if !anchored && r.elems[0] != "**" {
			r.elems = append([]string{"**"}, r.elems...)
		}
		// a pattern git would take but path.Match would not: drop it
		bad := false
		for _, e := range r.elems {
			if _, err := path.Match(e, ""); err != nil {
				bad = true
			}
		}
		if !bad {
			set.rules = append(set.rules, r)
		}
	}
	return set
}

// ignorer answers whether a path below a walk's root is ignored, given the
// .gitignore files from that root down to the path's directory.
type ignorer struct {
	sets []*ignoreSet
}

// maxIgnoreFile bounds a .gitignore (or .git/info/exclude) kin reads: one
// over it is passed by, as git passes by one over 100 MiB. A command may
// leave any file there (a sparse terabyte costs it no disk), and each
// file's rules stay in memory while the walk is below its folder.
const maxIgnoreFile = 8 << 20

// push loads dir/.gitignore (dir being depth elements below the root), if
// there is one, and reports whether it did. Read through the boundary: a
// FIFO there is refused, not waited on.
func (ig *ignorer) push(dir string, depth int) bool {
	data, err := boundary.ReadFileUpTo(filepath.Join(dir, ".gitignore"), maxIgnoreFile)
	if err != nil || len(data) == 0 {
		return false
	}
	ig.sets = append(ig.sets, parseGitignore(data, depth))
	return true
}

func (ig *ignorer) pop() { ig.sets = ig.sets[:len(ig.sets)-1] }

// ignored reports whether the path with the given elements below the root
// is ignored. The last matching rule decides, deeper files after shallower
// ones, as git does. (Git never looks inside an excluded directory; walks
// get that by not descending into one.)
func (ig *ignorer) ignored(elems []string, isDir bool) bool {
	ignored := false
	for _, s := range ig.sets {
		if s.depth >= len(elems) {
			continue
		}
		rel := elems[s.depth:]
		for i := range s.rules {
			r := &s.rules[i]
			if r.dirOnly && !isDir {
				continue
			}
			if r.neg == ignored {
				// only a rule that would change the answer matters
				if matchSegments(r.elems, rel) {
					ignored = !r.neg
				}
			}
		}
	}
	return ignored
}

// newIgnorer loads the .gitignore files (and .git/info/exclude) of root and
// of every directory from root down to dir, dir included.
func newIgnorer(root, dir string) (*ignorer, []string) {
	ig := &ignorer{}
	if data, err := boundary.ReadFileUpTo(filepath.Join(root, ".git", "info", "exclude"), maxIgnoreFile); err == nil {
		ig.sets = append(ig.sets, parseGitignore(data, 0))
	}
	var elems []string
	if rel, err := filepath.Rel(root, dir); err == nil && rel != "." {
		elems = strings.Split(filepath.ToSlash(rel), "/")
	}
	cur := root
	ig.push(cur, 0)
	for i, e := range elems {
		cur = filepath.Join(cur, e)
		ig.push(cur, i+1)
	}
	return ig, elems
}
