package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/lockedfile"
)

// Errors returned by Store methods (wrapped; test with errors.Is).
var (
	ErrExists        = errors.New("server already exists")
	ErrNotFound      = errors.New("server not found")
	ErrMalformedFile = errors.New("config file is malformed; kin will not overwrite it")
	ErrScope         = errors.New("cannot write this scope")
	ErrBadName       = errors.New("invalid server name")
)

// Store edits the project and global mcp.json files. Every method is one
// locked read-modify-write: other entries (and unknown top-level members)
// are written back byte for byte apart from indentation, ${VAR} spellings
// are never expanded, the file is replaced atomically with mode 0600, and a
// file that is not valid JSON is never overwritten (ErrMalformedFile). The
// foreign .mcp.json is only ever read (by Adopt).
//
// The project file is one people commit, so no secret value is ever written
// into it: Add and Update move every env and header value and every URL
// password and query value written as literal text into
// <KIN_HOME>/mcp_secrets.json (0600), keyed by project folder and server,
// and write a ${VAR} reference in its place, which Load resolves for that
// project's server (before the environment). Remove forgets them.
type Store struct {
	workdir, kinHome string

	// Moved, when set, is told which fields of a project entry had their
	// values moved to the secrets file ("env.TOKEN as ${TOKEN}").
	Moved func(server string, moved []string)
}

// NewStore returns a Store for the scopes of workdir and kinHome.
func NewStore(workdir, kinHome string) *Store {
	return &Store{workdir: workdir, kinHome: kinHome}
}

// Path returns the file of a writable scope (project or global).
func (st *Store) Path(scope Scope) (string, error) {
	switch {
	case scope == ScopeProject && st.workdir != "":
		return ProjectPath(st.workdir), nil
	case scope == ScopeGlobal && st.kinHome != "":
		return GlobalPath(st.kinHome), nil
	}
	return "", fmt.Errorf("%w: %q", ErrScope, scope)
}

// Add writes a new entry, given as raw JSON exactly as it should appear in
// the file (${VAR} unexpanded). The entry must be well formed (as Load would
// accept it, apart from unset variables); ErrExists if the name is taken,
// ErrBadName if it is not a name CheckName accepts.
func (st *Store) Add(scope Scope, name string, raw json.RawMessage) error {
	if err := CheckName(name); err != nil {
		return err
	}
	raw, vars, moved, err := prepareEntry(scope, name, compactCopy(raw))
	if err != nil {
		return err
	}
	err = st.edit(scope, func(doc *document) error {
		if _, ok := doc.entry(name); ok {
			return fmt.Errorf("%w: %q", ErrExists, name)
		}
		if scope == ScopeProject {
			// Under the project file's lock: the values are stored only for
			// an entry that is written, and before it is.
			if err := st.updateSecrets(name, nil, vars); err != nil {
				return err
			}
		}
		doc.set(name, raw)
		return nil
	})
	st.report(name, moved, err)
	return err
}

// prepareEntry checks an entry to be written and, for the project's file
// (which may be committed), moves its secret values out (moveSecrets): vars
// are the values to store, moved the fields they came from.
func prepareEntry(scope Scope, name string, raw json.RawMessage) (json.RawMessage, map[string]string, []string, error) {
	if err := checkRaw(name, raw); err != nil {
		return nil, nil, nil, err
	}
	if scope != ScopeProject {
		return raw, nil, nil, nil
	}
	raw, vars, moved, err := moveSecrets(name, raw)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("server %q: %v", name, err)
	}
	return raw, vars, moved, nil
}

func (st *Store) report(name string, moved []string, err error) {
	if err == nil && len(moved) > 0 && st.Moved != nil {
		st.Moved(name, moved)
	}
}

// Update replaces an existing entry. Fields kin knows (type, command, args,
// url, headers, env, timeout, disabled, allowed_tools/allowedTools, auth,
// oauth) take the new entry's values, or are removed when it omits them;
// other fields of the old entry are kept unless the new entry sets them.
// ErrNotFound if there is no such entry.
func (st *Store) Update(scope Scope, name string, raw json.RawMessage) error {
	raw, vars, moved, err := prepareEntry(scope, name, raw)
	if err != nil {
		return err
	}
	err = st.edit(scope, func(doc *document) error {
		old, ok := doc.entry(name)
		if !ok {
			return fmt.Errorf("%w: %q in %s scope", ErrNotFound, name, scope)
		}
		merged, err := mergeEntry(old, raw)
		if err != nil {
			return err
		}
		if err := checkRaw(name, merged); err != nil {
			return err
		}
		if scope == ScopeProject {
			// Keep the stored values the entry still refers to.
			refs := referencedVars(merged)
			if err := st.updateSecrets(name, func(v string) bool { return refs[v] }, vars); err != nil {
				return err
			}
		}
		doc.set(name, merged)
		return nil
	})
	st.report(name, moved, err)
	return err
}

// Remove deletes an entry; ErrNotFound if there is none.
func (st *Store) Remove(scope Scope, name string) error {
	return st.edit(scope, func(doc *document) error {
		if _, ok := doc.entry(name); !ok {
			return fmt.Errorf("%w: %q in %s scope", ErrNotFound, name, scope)
		}
		if scope == ScopeProject {
			if err := st.updateSecrets(name, nil, nil); err != nil {
				return err
			}
		}
		doc.remove(name)
		return nil
	})
}

// SetEnabled sets an entry's "disabled" field (disabling writes true;
// enabling writes false, or leaves an entry without the field untouched).
// With an empty scope it edits the entry that wins: the project one if the
// project file has the name, else the global one.
func (st *Store) SetEnabled(scope Scope, name string, enabled bool) error {
	if scope == "" {
		err := st.SetEnabled(ScopeProject, name, enabled)
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrScope) {
			return st.SetEnabled(ScopeGlobal, name, enabled)
		}
		return err
	}
	return st.edit(scope, func(doc *document) error {
		old, ok := doc.entry(name)
		if !ok {
			return fmt.Errorf("%w: %q in %s scope", ErrNotFound, name, scope)
		}
		f, err := parseObject(old)
		if err != nil {
			return fmt.Errorf("server %q: entry is not a JSON object", name)
		}
		for i, m := range f {
			if m.key == "disabled" {
				f[i].raw = json.RawMessage(fmt.Sprint(!enabled))
				doc.set(name, joinObject(f))
				return nil
			}
		}
		if !enabled {
			doc.set(name, joinObject(append(f, member{key: "disabled", raw: json.RawMessage("true")})))
		}
		return nil
	})
}

// Adopt copies the named entry of the foreign <workdir>/.mcp.json, raw and
// unexpanded, into the project scope. The foreign file is only read. Adopting
// moves configuration, never trust: the server still needs approval.
func (st *Store) Adopt(name string) error {
	if st.workdir == "" {
		return fmt.Errorf("%w: no workdir", ErrScope)
	}
	path, err := filepath.Abs(ForeignPath(st.workdir))
	if err != nil {
		return fmt.Errorf("adopt %q: %w", name, err)
	}
	// The repository's file: bounded, and a FIFO refused, never waited on
	// (as Load reads it).
	data, err := boundary.ReadFileUpTo(path, maxDoc)
	if err != nil {
		return fmt.Errorf("adopt %q: %w", name, err)
	}
	doc, err := parseDocument(data)
	if err != nil {
		return fmt.Errorf("adopt %q: %s: %v", name, path, err)
	}
	raw, ok := doc.entry(name)
	if !ok {
		return fmt.Errorf("adopt: %w: %q in %s", ErrNotFound, name, path)
	}
	if err := st.Add(ScopeProject, name, raw); err != nil {
		return fmt.Errorf("adopt: %w", err)
	}
	return nil
}

// edit runs fn on the scope's document under the file lock and writes the
// result. fn's error aborts without writing.
func (st *Store) edit(scope Scope, fn func(*document) error) error {
	path, err := st.Path(scope)
	if err != nil {
		return err
	}
	if scope == ScopeProject {
		if err := st.insideProject(path); err != nil {
			return err
		}
	}
	return lockedfile.Update(path, func(data []byte, _ bool) ([]byte, error) {
		doc, err := parseDocument(data)
		if err != nil {
			return nil, fmt.Errorf("refusing to write %s (%v); fix it by hand first: %w", path, err, ErrMalformedFile)
		}
		before, _ := doc.marshal()
		if err := fn(doc); err != nil {
			return nil, err
		}
		out, err := doc.marshal()
		if err != nil {
			return nil, err
		}
		if len(out) > maxDoc {
			// written, the file would be ignored whole at the next load:
			// every server in it gone until someone edits it by hand
			return nil, fmt.Errorf("refusing to write %s: it would be %d bytes, over the %d kin reads", path, len(out), maxDoc)
		}
		if len(data) > 0 && bytes.Equal(before, out) {
			return nil, nil // nothing changed: leave the file as it is
		}
		return out, nil
	})
}

// insideProject refuses a project file that a symlink (.kin, or
// .kin/mcp.json, as a repository may commit them) leads out of the project
// folder: lockedfile.Update follows a link, which for the person's own
// global file is a dotfiles repository, but for a repository's is
// anything, such as another harness's global MCP configuration, whose
// servers start without a question. A link that stays inside is followed.
func (st *Store) insideProject(path string) error {
	abs, err := filepath.Abs(st.workdir)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrScope, err)
	}
	root := boundary.RealPath(filepath.Clean(abs))
	if real := boundary.RealPath(filepath.Join(abs, ".kin", "mcp.json")); !boundary.Within(root, real) {
		return fmt.Errorf("%w: %s leads out of the project folder (to %s) through a symlink; kin writes a project's servers only inside it", ErrScope, path, real)
	}
	return nil
}

// checkRaw validates an entry for writing: its shape, not the environment.
func checkRaw(name string, raw json.RawMessage) error {
	e, err := decodeEntry(raw)
	if err == nil {
		_, err = checkEntry(name, e)
	}
	if err != nil {
		return fmt.Errorf("server %q: %s", name, oneLineErr(err))
	}
	return nil
}

// mergeEntry applies a new entry over an old one as Update documents.
func mergeEntry(old, upd json.RawMessage) (json.RawMessage, error) {
	nf, err := parseObject(upd)
	if err != nil {
		return nil, errors.New("entry is not a JSON object")
	}
	of, err := parseObject(old)
	if err != nil {
		return compactCopy(upd), nil // the old entry was not an object: replace it
	}
	newVals := map[string]json.RawMessage{}
	for _, m := range nf {
		newVals[m.key] = m.raw
	}
	var out []member
	seen := map[string]bool{}
	for _, m := range of {
		if v, ok := newVals[m.key]; ok {
			out = append(out, member{m.key, v})
			seen[m.key] = true
		} else if !knownFields[m.key] {
			out = append(out, m)
		}
	}
	for _, m := range nf {
		if !seen[m.key] {
			out = append(out, m)
			seen[m.key] = true
		}
	}
	return joinObject(out), nil
}

// joinObject renders members as a compact JSON object, values verbatim.
func joinObject(ms []member) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		writeKey(&b, m.key)
		b.Write(bytes.TrimSpace(m.raw))
	}
	b.WriteByte('}')
	return b.Bytes()
}

// compactCopy returns raw without insignificant whitespace (no escaping
// changes), or a trimmed copy if it does not compact.
func compactCopy(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return append(json.RawMessage(nil), bytes.TrimSpace(raw)...)
	}
	return b.Bytes()
}
