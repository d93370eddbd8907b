package chat

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// mention is a file a question names with @path (or @path:LINE, or
// @path:FROM-TO, lines counted from 1), to be attached as a file part.
type mention struct {
	path     string // absolute
	from, to int    // lines, 0 when the whole file
}

// mentions finds the @path words of a question that name a file under
// cwd (or an absolute one). A word whose path is no file (@ana, an email
// address) is only text; punctuation after a path (a comma, a full stop)
// is not part of it. The question's text is sent as it is: the model sees
// where each file was mentioned, and kin reads the file under the same
// rules as read_file.
func mentions(text, cwd string) []mention {
	var out []mention
	seen := map[mention]bool{}
	for _, word := range strings.Fields(text) {
		if len(word) < 2 || word[0] != '@' {
			continue
		}
		m, ok := parseMention(strings.TrimRight(word[1:], ",.;:!?)]}'\""), cwd)
		if ok && !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}

func parseMention(ref, cwd string) (mention, bool) {
	if m, ok := mentionFile(ref, cwd); ok {
		return m, true
	}
	// path:LINE or path:FROM-TO
	i := strings.LastIndexByte(ref, ':')
	if i <= 0 {
		return mention{}, false
	}
	m, ok := mentionFile(ref[:i], cwd)
	if !ok {
		return mention{}, false
	}
	lines := ref[i+1:]
	fromS, toS, isRange := strings.Cut(lines, "-")
	from, err := strconv.Atoi(fromS)
	if err != nil || from < 1 {
		return mention{}, false
	}
	to := from
	if isRange {
		if to, err = strconv.Atoi(toS); err != nil || to < from {
			return mention{}, false
		}
	}
	m.from, m.to = from, to
	return m, true
}

func mentionFile(p, cwd string) (mention, bool) {
	if p == "" {
		return mention{}, false
	}
	if strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[2:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return mention{}, false
	}
	return mention{path: filepath.Clean(p)}, true
}

// completePath completes the @path being typed: the entries of its folder
// that start with what is typed, a folder with a slash after it. At most
// limit of them.
func completePath(typed, cwd string, limit int) []string {
	dir, base := filepath.Split(typed)
	abs := dir
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(cwd, dir)
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || (strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		if e.IsDir() {
			name += "/"
		}
		out = append(out, dir+name)
		if len(out) == limit {
			break
		}
	}
	sort.Strings(out)
	return out
}
