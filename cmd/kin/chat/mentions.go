package chat

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/kin-dev/kin/rpc"
)

// questionParams is turn/start's params for a question: its text, and a
// file part for each file it mentions. kin reads the files (read_file's
// rules: a file outside the workspace refuses the question, saying so).
func questionParams(session, text, cwd string) turnStartParams {
	ms := mentions(text, cwd)
	if len(ms) == 0 {
		return turnStartParams{SessionID: session, Input: text}
	}
	parts := []rpc.InputPart{{Type: "text", Text: text}}
	for _, m := range ms {
		parts = append(parts, m.part(cwd))
	}
	return turnStartParams{SessionID: session, Parts: parts}
}

// part is the mention as a file part: its path relative to cwd when it is
// under it, its lines as whole lines of LSP's zero-based range.
func (m mention) part(cwd string) rpc.InputPart {
	p := rpc.InputPart{Type: "file", Path: m.path}
	if rel, err := filepath.Rel(cwd, m.path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		p.Path = rel
	}
	if m.from > 0 {
		p.Range = &rpc.Range{Start: rpc.Position{Line: m.from - 1}, End: rpc.Position{Line: m.to}}
	}
	return p
}

// attachedLine says what a question attached, as turn/started tells
// ("" when nothing).
func attachedLine(parts []rpc.InputPart) string {
	var names []string
	for _, p := range parts {
		name := p.Type
		switch {
		case p.Path != "":
			name = p.Path
			if p.Range != nil {
				// (an end at character 0 of a later line does not take it)
				from, to := p.Range.Start.Line+1, p.Range.End.Line+1
				if p.Range.End.Character == 0 && to > from {
					to--
				}
				name += ":" + strconv.Itoa(from)
				if to > from {
					name += "-" + strconv.Itoa(to)
				}
			}
		case p.URI != "":
			name = p.URI
		}
		if p.Bytes > 0 {
			name += fmt.Sprintf(" (%d bytes)", p.Bytes)
		}
		names = append(names, cleanLine(name))
	}
	if len(names) == 0 {
		return ""
	}
	return "[attached " + strings.Join(names, ", ") + "]"
}

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
