package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/visible"
)

// Limits of one skill (the MCP Skills extension's, which hosts must take).
const (
	MaxFiles = 512
	MaxBytes = 16 << 20
	// MaxDescription is the most of a description the model is shown.
	MaxDescription = 1024
	// maxSkillMD is the most of a SKILL.md kin reads.
	maxSkillMD = 256 << 10
)

// FileName is a skill's manifest.
const FileName = "SKILL.md"

// Source says where a skill was found.
type Source string

// Sources, nearest last.
const (
	SourceKin           Source = "kin"    // $KIN_HOME/skills
	SourceAgents        Source = "agents" // ~/.agents/skills
	SourceProjectClaude Source = "project:.claude/skills"
	SourceProjectAgents Source = "project:.agents/skills"
	SourceMCP           Source = "mcp" // an MCP server's (package agent)
)

// Skill is one skill found on disk.
type Skill struct {
	Name        string
	Description string
	Source      Source
	// Dir is the skill's folder, symlinks resolved.
	Dir string
	// Project is the workspace folder (real) of a repository's skill; ""
	// for the person's own.
	Project string
	// AllowedTools are the front matter's allowed-tools, as written
	// (tool names, perhaps with a pattern: "Bash(git:*)").
	AllowedTools []string
	License      string
	// Files are the folder's files, slash-separated, relative to Dir.
	Files []string
	// Digest is "sha256:<hex>" over every file's name and content.
	Digest string
}

// Personal reports whether the skill is the person's own (not a
// repository's).
func (s Skill) Personal() bool { return s.Project == "" }

// Clash is a name more than one skill has: Winner is used, the others are
// listed so the person sees them.
type Clash struct {
	Name    string
	Winner  string   // the folder used
	Shadows []string // the folders not used
}

// Found is what Discover found.
type Found struct {
	Skills  []Skill // by name
	Clashes []Clash
	// Shadowed are the skills a nearer one of the same name passed over,
	// farthest first: the one to use instead while the nearer one is not
	// trusted (package agent decides).
	Shadowed []Skill
	// Problems are skills that could not be read, for a person.
	Problems []string
}

// Place is one folder of skills to look in.
type Place struct {
	Dir     string
	Source  Source
	Project string // the workspace folder, for a repository's
}

// Places are where skills are found for these workspace folders, farthest
// first: $KIN_HOME/skills, ~/.agents/skills, then each root's .claude and
// .agents skills (the first root last: nearest).
func Places(kinHome, home string, roots []string) []Place {
	var out []Place
	if kinHome != "" {
		out = append(out, Place{Dir: filepath.Join(kinHome, "skills"), Source: SourceKin})
	}
	if home != "" {
		out = append(out, Place{Dir: filepath.Join(home, ".agents", "skills"), Source: SourceAgents})
	}
	for i := len(roots) - 1; i >= 0; i-- {
		r := realPath(roots[i])
		out = append(out, Place{Dir: filepath.Join(r, ".claude", "skills"), Source: SourceProjectClaude, Project: r},
			Place{Dir: filepath.Join(r, ".agents", "skills"), Source: SourceProjectAgents, Project: r})
	}
	return out
}

// Discover reads every skill of places (farthest first): a later skill of
// the same name wins, and the clash is listed.
func Discover(places []Place) Found {
	var f Found
	byName := map[string]int{}
	for _, p := range places {
		entries, err := os.ReadDir(p.Dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				f.Problems = append(f.Problems, fmt.Sprintf("%s: %v", p.Dir, err))
			}
			continue
		}
		for _, e := range entries {
			dir := filepath.Join(p.Dir, e.Name())
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, FileName)); err != nil {
				continue
			}
			s, err := Read(dir, p.Source, p.Project)
			if err != nil {
				f.Problems = append(f.Problems, err.Error())
				continue
			}
			if i, ok := byName[s.Name]; ok {
				f.Clashes = append(f.Clashes, Clash{Name: s.Name, Winner: s.Dir, Shadows: []string{f.Skills[i].Dir}})
				f.Shadowed = append(f.Shadowed, f.Skills[i])
				f.Skills[i] = s
				continue
			}
			byName[s.Name] = len(f.Skills)
			f.Skills = append(f.Skills, s)
		}
	}
	f.Clashes = mergeClashes(f.Clashes)
	sort.Slice(f.Skills, func(i, j int) bool { return f.Skills[i].Name < f.Skills[j].Name })
	return f
}

// mergeClashes keeps one clash per name: the last winner, every folder it
// shadowed.
func mergeClashes(in []Clash) []Clash {
	var out []Clash
	at := map[string]int{}
	for _, c := range in {
		if i, ok := at[c.Name]; ok {
			out[i].Shadows = append(out[i].Shadows, out[i].Winner)
			out[i].Winner = c.Winner
			continue
		}
		at[c.Name] = len(out)
		out = append(out, c)
	}
	return out
}

// nameRule is the Agent Skills naming rule: lowercase letters, digits and
// single hyphens, 1 to 64 characters, no hyphen at either end.
var nameRule = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })

// ValidName reports whether name follows the Agent Skills naming rule: a
// skill's name goes into the model's instructions and names a command,
// so whoever wrote it (a repository, an MCP server) writes no more there
// than a name.
func ValidName(name string) bool { return len(name) <= 64 && nameRule().MatchString(name) }

// Read reads the skill in dir: its front matter, its files and digest.
func Read(dir string, source Source, project string) (Skill, error) {
	real := realPath(dir)
	s := Skill{Dir: real, Source: source, Project: project}
	files, digest, err := Digest(real)
	if err != nil {
		return s, fmt.Errorf("skill %s: %v", dir, err)
	}
	s.Files, s.Digest = files, digest
	data, err := readSkillMD(real)
	if err != nil {
		return s, fmt.Errorf("skill %s: %v", dir, err)
	}
	fm, _, err := Split(data)
	if err != nil {
		return s, fmt.Errorf("skill %s: %v", dir, err)
	}
	s.Name, s.Description, s.License = fm.Name, strings.TrimSpace(fm.Description), fm.License
	s.AllowedTools = fm.AllowedTools
	switch {
	case s.Name == "":
		return s, fmt.Errorf("skill %s: SKILL.md's front matter has no name", dir)
	case !ValidName(s.Name):
		return s, fmt.Errorf("skill %s: the name %q is not a skill name (lowercase letters, digits and hyphens, at most 64)", dir, s.Name)
	case s.Description == "":
		return s, fmt.Errorf("skill %s: SKILL.md's front matter has no description", dir)
	}
	return s, nil
}

// FrontMatter is what kin reads of a SKILL.md's front matter.
type FrontMatter struct {
	Name         string
	Description  string
	License      string
	AllowedTools []string
	// Fields are every field as written (what the MCP Skills extension
	// compares an entry's frontmatter with).
	Fields map[string]any
}

// Split parses a SKILL.md: its YAML front matter (between the first two
// "---" lines) and its body.
func Split(data []byte) (FrontMatter, string, error) {
	var fm FrontMatter
	text := strings.TrimPrefix(string(data), "\ufeff")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return fm, "", errors.New("SKILL.md does not start with YAML front matter (---)")
	}
	rest := text[4:]
	var head, body string
	switch {
	case rest == "---" || strings.HasPrefix(rest, "---\n"):
		body = strings.TrimPrefix(strings.TrimPrefix(rest, "---"), "\n")
	case strings.Contains(rest, "\n---\n"):
		i := strings.Index(rest, "\n---\n")
		head, body = rest[:i], rest[i+5:]
	case strings.HasSuffix(rest, "\n---"):
		head = rest[:len(rest)-4]
	default:
		return fm, "", errors.New("SKILL.md's front matter is not closed (---)")
	}
	fields := map[string]any{}
	if err := yaml.Unmarshal([]byte(head), &fields); err != nil {
		return fm, "", fmt.Errorf("SKILL.md's front matter is not YAML: %v", err)
	}
	fm.Fields = fields
	fm.Name, _ = fields["name"].(string)
	fm.Description, _ = fields["description"].(string)
	fm.License, _ = fields["license"].(string)
	fm.AllowedTools = AllowedTools(fields["allowed-tools"])
	return fm, body, nil
}

// AllowedTools reads a front matter's allowed-tools as written: a string
// ("Bash(git add:*) Read, Grep") or a list of names. A skill on disk and
// a server's entry are read alike, so either form narrows.
func AllowedTools(v any) []string {
	var out []string
	switch v := v.(type) {
	case string:
		out = splitTools(v)
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok && strings.TrimSpace(s) != "" {
				out = append(out, strings.TrimSpace(s))
			}
		}
	}
	return out
}

// splitTools splits an allowed-tools string on spaces and commas outside
// parentheses ("Bash(git add:*) Read, Grep").
func splitTools(v string) []string {
	var out []string
	depth, start := 0, 0
	flush := func(i int) {
		if w := strings.TrimSpace(v[start:i]); w != "" {
			out = append(out, w)
		}
		start = i + 1
	}
	for i, r := range v {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0 && (r == ' ' || r == ',' || r == '\t' || r == '\n'):
			flush(i)
		}
	}
	flush(len(v))
	return out
}

// Body reads the skill's SKILL.md again and returns its body, after
// checking that the folder is still what s describes (its digest): a skill
// changed since it was found (and trusted) is refused.
func Body(s Skill) (string, error) {
	_, digest, err := Digest(s.Dir)
	if err != nil {
		return "", err
	}
	if digest != s.Digest {
		return "", ErrChanged
	}
	data, err := readSkillMD(s.Dir)
	if err != nil {
		return "", err
	}
	_, body, err := Split(data)
	return body, err
}

// ErrChanged is Body's answer for a skill whose files changed since it
// was found.
var ErrChanged = errors.New("the skill's files changed since kin read them")

func readSkillMD(dir string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := boundary.OpenIn(root, FileName) // a FIFO planted there is refused, not waited on
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, errors.New("SKILL.md is not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSkillMD+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxSkillMD {
		return nil, fmt.Errorf("SKILL.md is over %d KiB", maxSkillMD>>10)
	}
	return data, nil
}

// Digest lists the files of dir (slash-separated, sorted) and digests
// them: "sha256:<hex>" over each name and its content's SHA-256 (a symlink
// by its target, never followed). More than MaxFiles files or MaxBytes in
// all is an error: such a skill is not loaded.
func Digest(dir string) ([]string, string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", err
	}
	defer root.Close()
	var files []string
	var total int64
	h := sha256.New()
	type entry struct{ name, sum string }
	var entries []entry
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if len(files) >= MaxFiles {
			return fmt.Errorf("it has more than %d files", MaxFiles)
		}
		files = append(files, p)
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(filepath.Join(dir, filepath.FromSlash(p)))
			if err != nil {
				return err
			}
			entries = append(entries, entry{p, "symlink:" + target})
			return nil
		}
		if !d.Type().IsRegular() {
			entries = append(entries, entry{p, "special"})
			return nil
		}
		f, err := boundary.OpenIn(root, p) // swapped for a FIFO since the walk saw it: refused
		if err != nil {
			return err
		}
		defer f.Close()
		fh := sha256.New()
		n, err := io.Copy(fh, io.LimitReader(f, MaxBytes-total+1))
		if err != nil {
			return err
		}
		if total += n; total > MaxBytes {
			return fmt.Errorf("its files are over %d MiB", MaxBytes>>20)
		}
		entries = append(entries, entry{p, hex.EncodeToString(fh.Sum(nil))})
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	sort.Strings(files)
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	for _, e := range entries {
		h.Write([]byte(e.name))
		h.Write([]byte{0})
		h.Write([]byte(e.sum))
		h.Write([]byte{'\n'})
	}
	return files, "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// realPath resolves symlinks where it can.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// Clip cuts a description to n runes for the model's instructions.
func Clip(s string, n int) string { return visible.Clip(s, n) }
