package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kin-dev/kin/agent/boundary"
)

// Option configures Load.
type Option func(*options)

type options struct {
	lookup LookupEnv
}

// WithLookupEnv sets the variable lookup used for ${VAR} expansion (default
// os.LookupEnv).
func WithLookupEnv(f LookupEnv) Option {
	return func(o *options) { o.lookup = f }
}

// ProjectPath is the project scope file, <workdir>/.kin/mcp.json.
func ProjectPath(workdir string) string { return filepath.Join(workdir, ".kin", "mcp.json") }

// GlobalPath is the global scope file, <kinHome>/mcp.json.
func GlobalPath(kinHome string) string { return filepath.Join(kinHome, "mcp.json") }

// ForeignPath is the root .mcp.json of other harnesses, <workdir>/.mcp.json.
// kin never loads or writes it.
func ForeignPath(workdir string) string { return filepath.Join(workdir, ".mcp.json") }

// Load reads, merges, expands and validates both scopes and lists the
// foreign .mcp.json without loading it. An empty workdir or kinHome skips
// that scope. Problems with entries or file syntax become Warnings; the
// error is only for I/O failures other than a missing file.
func Load(workdir, kinHome string, opts ...Option) (*Config, error) {
	o := options{lookup: os.LookupEnv}
	for _, opt := range opts {
		opt(&o)
	}
	// kin's model keys (OPENAI_API_KEY, every apiKeyEnv of settings.json)
	// never reach a server, whatever its entry says: the trust boundary's
	// rule for every process kin starts.
	withheld := boundary.ModelKeyVars(kinHome)
	cfg := &Config{}
	var project, global *document
	var projectPath, globalPath string
	var err error
	if kinHome != "" {
		globalPath = GlobalPath(kinHome)
	}
	if workdir != "" {
		projectPath = ProjectPath(workdir)
		if globalPath != "" && sameFile(projectPath, globalPath) {
			projectPath = "" // workdir/.kin is KIN_HOME: load the file once, as global
		} else if project, err = cfg.readDoc(projectPath, notWritten, false); err != nil {
			return nil, err
		}
	}
	if globalPath != "" {
		if global, err = cfg.readDoc(globalPath, notWritten, true); err != nil {
			return nil, err
		}
	}

	inProject := map[string]bool{}
	if project != nil {
		var stored map[string]map[string]string
		if kinHome != "" {
			stored = projectSecrets(kinHome, workdir)
		}
		for _, m := range project.servers {
			inProject[m.key] = true
			s, err := buildServer(ScopeProject, projectPath, m.key, m.raw, true, withSecrets(stored[m.key], o.lookup), withheld)
			if cfg.add(projectPath, m.key, err) {
				cfg.Servers = append(cfg.Servers, s)
			}
		}
	}
	if global != nil {
		for _, m := range global.servers {
			shadowed := inProject[m.key]
			s, err := buildServer(ScopeGlobal, globalPath, m.key, m.raw, !shadowed, o.lookup, withheld)
			switch {
			case !cfg.add(globalPath, m.key, err):
			case shadowed:
				cfg.Shadowed = append(cfg.Shadowed, s)
			default:
				cfg.Servers = append(cfg.Servers, s)
			}
		}
	}
	if workdir != "" {
		if err := cfg.loadForeign(ForeignPath(workdir)); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// loadForeign lists the servers of a root .mcp.json without expanding them.
func (cfg *Config) loadForeign(path string) error {
	if _, err := os.Stat(path); err != nil {
		return nil // absent (or unreachable): nothing to point at
	}
	doc, err := cfg.readDoc(path, "its servers cannot be listed or adopted", false)
	if err != nil {
		return err
	}
	if doc == nil {
		doc = &document{}
	}
	for _, m := range doc.servers {
		s, err := buildServer(ScopeForeign, path, m.key, m.raw, false, nil, nil)
		if cfg.add(path, m.key, err) {
			cfg.Foreign = append(cfg.Foreign, s)
		}
	}
	cfg.Notices = append(cfg.Notices, fmt.Sprintf(
		"found %s with %d server(s) (not loaded): kin reads .kin/mcp.json; adopt its servers with /mcp (mcp/adopt)",
		path, len(doc.servers)))
	return nil
}

// notWritten ends the warning for a malformed kin scope file.
const notWritten = "none of its servers are loaded, and kin will not write this file until it is fixed"

// maxDoc bounds an MCP configuration file.
const maxDoc = 4 << 20

// readDoc reads and parses one file. A missing file gives (nil, nil); a
// malformed one, or a repository's (not yours) that cannot be read, gives
// (nil, nil) and a file-level warning ending in consequence.
func (cfg *Config) readDoc(path, consequence string, yours bool) (*document, error) {
	// Bounded and through the boundary: a repository's .mcp.json may be a
	// FIFO (refused, never waited on) or a sparse terabyte (refused by its
	// size, never read whole).
	read := boundary.ReadFileUpTo
	if yours {
		read = readYours
	}
	data, err := read(path, maxDoc)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil && !yours {
		// A repository's file: as a malformed one, said, and your own
		// servers still load (its unreadable file must not stop them).
		cfg.Warnings = append(cfg.Warnings, Warning{File: path, Problem: fmt.Sprintf("cannot be read (%v): %s", err, consequence)})
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read MCP config: %w", err)
	}
	doc, err := parseDocument(data)
	if err != nil {
		cfg.Warnings = append(cfg.Warnings, Warning{File: path, Problem: fmt.Sprintf("%v: %s", err, consequence)})
		return nil, nil
	}
	for _, name := range doc.dups {
		cfg.Warnings = append(cfg.Warnings, Warning{File: path, Problem: fmt.Sprintf(
			"server %q appears more than once; the last entry is used", name)})
	}
	return doc, nil
}

// readYours reads one of the person's own files in KIN_HOME, which may be
// a symlink into a dotfiles repository (the Store writes through it too):
// the link is resolved first, then the file read bounded and
// non-blocking like any other. (The boundary's read refuses a link out of
// the file's folder, the rule for a repository's files.)
func readYours(path string, max int64) ([]byte, error) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	return boundary.ReadFileUpTo(abs, max)
}

// add records err as a warning for the entry and reports whether it was nil.
func (cfg *Config) add(file, name string, err error) bool {
	if err == nil {
		return true
	}
	cfg.Warnings = append(cfg.Warnings, Warning{File: file, Server: name, Problem: oneLineErr(err)})
	return false
}

// sameFile reports whether two paths name the same file or would (when
// neither exists yet, by cleaned absolute path).
func sameFile(a, b string) bool {
	if fa, err := os.Stat(a); err == nil {
		if fb, err := os.Stat(b); err == nil {
			return os.SameFile(fa, fb)
		}
	}
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}
