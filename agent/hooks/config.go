package hooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/settings"
	"github.com/kin-dev/kin/agent/visible"
)

// Event is when a hook runs.
type Event string

// Events.
const (
	SessionStart     Event = "SessionStart"
	UserPromptSubmit Event = "UserPromptSubmit"
	PreToolUse       Event = "PreToolUse"
	PostToolUse      Event = "PostToolUse"
	Stop             Event = "Stop"
)

// Events are the events kin runs hooks for.
var Events = []Event{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop}

// Owner says whose a hook is.
type Owner string

// Owners.
const (
	// Person: $KIN_HOME/settings.json. May allow a call.
	Person Owner = "person"
	// Project: a repository's file. Runs only once trusted; may deny, ask
	// or add context, never allow.
	Project Owner = "project"
)

// DefaultTimeout is how long a command hook may run when its entry names
// no timeout.
const DefaultTimeout = 60 * time.Second

// DefaultRequestTimeout is how long a prompt or http hook's request may
// take when its entry names no timeout (Claude Code's default for them).
const DefaultRequestTimeout = 30 * time.Second

// DefaultAgentTimeout is how long an agent hook's judge may work, all its
// requests and reads together, when its entry names no timeout (Claude
// Code's default for them).
const DefaultAgentTimeout = 60 * time.Second

// MaxAgentRequests is the most model requests one agent hook's judge
// makes (Claude Code's 50 turns): without a verdict by then it fails,
// blocking nothing.
const MaxAgentRequests = 50

// Hook types kin runs.
const (
	TypeCommand = "command"
	TypePrompt  = "prompt"
	TypeHTTP    = "http"
	// TypeAgent is a prompt hook whose judge may read the workspace first
	// (kin's read-only file tools) before its verdict.
	TypeAgent = "agent"
)

// Hook is one configured hook: a command, a prompt for the session's
// model (answered at once, or by a judge that reads first), or an http
// endpoint.
type Hook struct {
	Event   Event
	Matcher string
	// Type is TypeCommand, TypePrompt, TypeAgent or TypeHTTP.
	Type    string
	Command string
	// Prompt and Model are a prompt or agent hook's text and model ("":
	// the session's).
	Prompt, Model string
	// URL, Headers and AllowedEnvVars are an http hook's: where its input
	// is POSTed, the headers sent (values may name the allowed variables
	// as $VAR or ${VAR}).
	URL            string
	Headers        map[string]string
	AllowedEnvVars []string
	Timeout        time.Duration
	Owner          Owner
	// File is the configuration file it is in; Where its place there
	// ("PreToolUse[0].hooks[1]").
	File, Where string
	// Project is the workspace folder (real) of a project's hook, and of
	// the person's command hook that runs a file of that project
	// (InProject).
	Project string
	// Digest is "sha256:<hex>" over the entry (event, matcher, type, what
	// it runs or sends and where, timeout) and every file of the project a
	// command names: what the person trusts.
	Digest string
}

// Config is every hook of a session.
type Config struct {
	Hooks []Hook
	// Problems are configuration files kin could not read, for a person.
	Problems []string
}

// ProjectFiles are a project's hook files, relative to its folder.
var ProjectFiles = []string{".kin/hooks.json", ".claude/settings.json", ".claude/settings.local.json"}

// Load reads the person's hooks ($KIN_HOME/settings.json) and each
// workspace folder's.
func Load(kinHome string, roots []string) Config {
	var c Config
	if kinHome != "" {
		c.read(filepath.Join(kinHome, "settings.json"), Person, "")
		if len(roots) > 0 {
			for i, h := range c.Hooks {
				if bound, ok := h.InProject(roots[0]); ok {
					c.Hooks[i] = bound
				}
			}
		}
	}
	for _, r := range roots {
		real := boundary.RealPath(r)
		for _, f := range ProjectFiles {
			c.read(filepath.Join(real, filepath.FromSlash(f)), Project, real)
		}
	}
	return c
}

// file is a configuration file's hooks.
type file struct {
	Hooks map[string][]struct {
		Matcher string  `json:"matcher"`
		Hooks   []entry `json:"hooks"`
	} `json:"hooks"`
}

// maxFile bounds a configuration file.
const maxFile = 1 << 20

func (c *Config) read(path string, owner Owner, project string) {
	var data []byte
	var err error
	if project != "" {
		// through the boundary's resolver: a symlink out of the project is
		// not followed, and a planted FIFO or sparse terabyte is refused
		// before it is read, not waited on or read whole
		data, err = boundary.ReadFileUpTo(path, maxFile)
	} else {
		// the person's settings.json, read as package settings reads it:
		// a FIFO or /dev/zero there is an error, not a hang
		data, err = settings.ReadFile(path)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err == nil && len(data) > maxFile {
		err = fmt.Errorf("over %d KiB", maxFile>>10)
	}
	if err != nil {
		c.Problems = append(c.Problems, fmt.Sprintf("hooks in %s: %v", path, err))
		return
	}
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		c.Problems = append(c.Problems, fmt.Sprintf("hooks in %s: not the hooks format (%v)", path, err))
		return
	}
	events := make([]string, 0, len(f.Hooks))
	for e := range f.Hooks {
		events = append(events, e)
	}
	sort.Strings(events)
	for _, e := range events {
		ev := Event(e)
		if !slices.Contains(Events, ev) {
			continue // an event kin has not (Notification, SubagentStop...)
		}
		for i, group := range f.Hooks[e] {
			if _, err := matcherRegexp(group.Matcher); err != nil {
				c.Problems = append(c.Problems, fmt.Sprintf("hooks in %s: %s[%d]: the matcher %q is not a regular expression", path, e, i, group.Matcher))
				continue
			}
			for j, h := range group.Hooks {
				hk, problem := h.hook(ev)
				if problem != "" {
					c.Problems = append(c.Problems, fmt.Sprintf("hooks in %s: %s[%d].hooks[%d]: %s", path, e, i, j, problem))
					continue
				}
				hk.Matcher, hk.Owner, hk.File, hk.Where, hk.Project = group.Matcher, owner, path, fmt.Sprintf("%s[%d].hooks[%d]", e, i, j), project
				hk.Digest = digest(hk)
				c.Hooks = append(c.Hooks, hk)
			}
		}
	}
}

// digest covers the entry and the project's files its command names. A
// command hook's is what it was before other types ran, so what a person
// trusted stays trusted; a prompt, agent or http hook's covers its type
// and every field that says what it sends and where (an agent hook's:
// its type, prompt, model and timeout).
func digest(h Hook) string {
	var scripts map[string]string
	if h.Type == TypeCommand {
		scripts = h.scripts()
	}
	return digestWith(h, scripts)
}

// digestWith is digest with the hook's scripts (h.scripts()) already
// hashed: InProject hashes them once to know whether the hook is bound,
// and again for its digest would read every file twice.
func digestWith(h Hook, scripts map[string]string) string {
	sum := sha256.New()
	fmt.Fprintf(sum, "%s\x00%s\x00%s\x00%s\x00%d\x00", h.File, h.Event, h.Matcher, h.Command, h.Timeout)
	if h.Type != TypeCommand {
		names := make([]string, 0, len(h.Headers))
		for k := range h.Headers {
			names = append(names, k)
		}
		sort.Strings(names)
		headers := make([][2]string, 0, len(names))
		for _, k := range names {
			headers = append(headers, [2]string{k, h.Headers[k]})
		}
		// JSON keeps the fields apart whatever they hold
		b, _ := json.Marshal([]any{h.Type, h.Prompt, h.Model, h.URL, headers, h.AllowedEnvVars})
		sum.Write(b)
		return "sha256:" + hex.EncodeToString(sum.Sum(nil))
	}
	if h.Project != "" {
		keys := make([]string, 0, len(scripts))
		for k := range scripts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(sum, "%s=%s\x00", k, scripts[k])
		}
	}
	return "sha256:" + hex.EncodeToString(sum.Sum(nil))
}

// InProject is the person's command hook as it runs in a session whose
// first folder is root. When its command names a file of that project
// (`$CLAUDE_PROJECT_DIR/.claude/hooks/guard.sh`, as people copy hooks from
// Claude Code), the repository decides what the person's hook runs: the
// hook is bound to the project (Project set, so the file is in its digest)
// and runs only once the person trusts that content, as a project's hook
// does (RunsProjectContent). It keeps the person's powers (it may allow a
// call): the person trusted exactly that content. ok is false for every
// other hook, and when the command names no file of the project.
func (h Hook) InProject(root string) (Hook, bool) {
	if h.Owner != Person || h.Type != TypeCommand || h.Project != "" || root == "" {
		return h, false
	}
	bound := h
	bound.Project = boundary.RealPath(root)
	scripts := bound.scripts()
	if len(scripts) == 0 {
		return h, false
	}
	bound.Digest = digestWith(bound, scripts)
	return bound, true
}

// scripts are the project's files the command runs, by real path, with
// their digests (none when the hook is not bound to a project).
func (h Hook) scripts() map[string]string {
	return boundary.Scripts("", commandWords(h.Command, h.Project), h.Project, h.Project)
}

// RunsProjectContent says whether the hook runs only once the person
// trusts it (the ledger, by Digest): a project's hook, and the person's
// hook that runs a file of the project (InProject).
func (h Hook) RunsProjectContent() bool { return h.Owner == Project || h.Project != "" }

// Current is the hook's digest now (its scripts may have changed since
// Load).
func (h Hook) Current() string { return digest(h) }

// projectMark stands for the project folder while a command is split
// into words: put in before, a folder with a blank or a parenthesis in its
// path ("My Projects", "app (1)") fell apart into words that named no
// file, and the person's hook ran the project's script unasked.
const projectMark = "\x00project\x00"

// commandWords are the words of a hook's shell line that may name a file
// it runs, with the project folder for $CLAUDE_PROJECT_DIR and
// $KIN_PROJECT_DIR (what the hook's environment holds) put in after the
// split: split at blanks and at the shell's operators too, so that
// `./guard.sh; echo ok`, `a && ./guard.sh` or `./guard.sh>log` name
// ./guard.sh (split at blanks alone, "./guard.sh;" named no file, the
// script was left out of the digest, and a changed script ran under the
// trust given to the old one). A quoted word is one word, its quotes
// dropped; every word is also looked at split at every blank and
// operator, quotes ignored (a word more only binds a file more).
func commandWords(cmd, project string) []string {
	marked := strings.NewReplacer("${CLAUDE_PROJECT_DIR}", projectMark, "$CLAUDE_PROJECT_DIR", projectMark,
		"${KIN_PROJECT_DIR}", projectMark, "$KIN_PROJECT_DIR", projectMark).Replace(cmd)
	sep := func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(";&|<>()`", r) }
	var words []string
	add := func(w string) {
		if w != "" {
			words = append(words, strings.ReplaceAll(w, projectMark, project))
		}
	}
	var b strings.Builder
	var quote rune
	for _, r := range marked {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			b.WriteRune(r)
		case r == '"' || r == '\'':
			quote = r
		case sep(r):
			add(b.String())
			b.Reset()
		default:
			b.WriteRune(r)
		}
	}
	add(b.String())
	for _, w := range strings.FieldsFunc(strings.NewReplacer(`"`, "", "'", "").Replace(marked), sep) {
		add(w)
	}
	return words
}

// ccNames are Claude Code's tool names and kin's.
var ccNames = map[string]string{
	"Bash": "bash", "Read": "read_file", "Write": "write_file", "Edit": "edit_file", "MultiEdit": "edit_file",
	"Grep": "search", "Glob": "search", "LS": "list_dir",
}

// ClaudeName is Claude Code's name of a kin tool (bash: Bash), or the name
// itself where Claude Code has none (mcp__server__tool, kin's own tools).
func ClaudeName(kin string) string {
	switch kin {
	case "bash":
		return "Bash"
	case "read_file":
		return "Read"
	case "write_file":
		return "Write"
	case "edit_file":
		return "Edit"
	case "search":
		return "Grep"
	case "list_dir":
		return "LS"
	}
	return kin
}

// KinName is kin's name of a tool Claude Code names (Bash: bash), or the
// name itself.
func KinName(cc string) string {
	if k, ok := ccNames[cc]; ok {
		return k
	}
	return cc
}

func matcherRegexp(m string) (*regexp.Regexp, error) {
	if m == "" || m == "*" {
		return nil, nil
	}
	return regexp.Compile("^(?:" + m + ")$")
}

// Matches reports whether the hook runs for a call of the kin tool named
// tool: its matcher matches kin's name, Claude Code's name, or (written
// with Claude Code's names) the names kin's tool stands for. Events
// without tools match always.
func (h Hook) Matches(tool string) bool {
	if h.Event != PreToolUse && h.Event != PostToolUse {
		return true
	}
	re, err := matcherRegexp(h.Matcher)
	if err != nil {
		return false
	}
	if re == nil {
		return true
	}
	if re.MatchString(tool) || re.MatchString(ClaudeName(tool)) {
		return true
	}
	for cc, k := range ccNames {
		if k == tool && re.MatchString(cc) {
			return true
		}
	}
	return false
}

// For lists the hooks of an event that match a tool ("" for events
// without one), in the order they are configured: the person's first.
func (c Config) For(ev Event, tool string) []Hook {
	var out []Hook
	for _, h := range c.Hooks {
		if h.Event == ev && h.Matches(tool) {
			out = append(out, h)
		}
	}
	return out
}

// Display is the hook as a person reads it in a notice: "PreToolUse Bash:
// sh guard.sh", "Stop: prompt: Check that the tests…" (a prompt cut
// short; "agent: …" for an agent hook's), "PreToolUse: POST
// https://hooks.example/check?key=●●●●".
func (h Hook) Display() string {
	m := h.Matcher
	if m != "" {
		m = " " + m
	}
	d := h.Detail()
	if h.Type == TypePrompt || h.Type == TypeAgent {
		d = h.Type + ": " + visible.Clip(h.Prompt, 61)
	}
	return string(h.Event) + m + ": " + d
}

// Detail is what the hook runs or sends, in full, for the person deciding
// whether to trust it: its command, "prompt: <text>" or "agent: <text>"
// (with "(model X)" when it names one), or "POST <url>" with the URL's query values and
// credentials masked, the header names it sends (never their values) and
// the environment variables it may put in them: an http hook can send
// those off the computer, which a confined command cannot.
func (h Hook) Detail() string {
	switch h.Type {
	case TypePrompt, TypeAgent:
		d := h.Type + ": " + h.Prompt
		if h.Model != "" {
			d += " (model " + h.Model + ")"
		}
		return d
	case TypeHTTP:
		d := "POST " + boundary.MaskURL(h.URL)
		if len(h.Headers) > 0 {
			names := make([]string, 0, len(h.Headers))
			for k := range h.Headers {
				names = append(names, k)
			}
			sort.Strings(names)
			d += " (headers: " + strings.Join(names, ", ")
			if len(h.AllowedEnvVars) > 0 {
				d += "; variables: " + strings.Join(h.AllowedEnvVars, ", ")
			}
			d += ")"
		}
		return d
	}
	if h.Owner == Person && h.Project != "" {
		return h.Command + " (your hook; it runs the project's " + strings.Join(h.projectFiles(), ", ") + ")"
	}
	return h.Command
}

// projectFiles are the project's files the command runs, relative to the
// project, sorted.
func (h Hook) projectFiles() []string {
	var out []string
	for p := range h.scripts() {
		if rel, err := filepath.Rel(h.Project, p); err == nil {
			p = filepath.ToSlash(rel)
		}
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
