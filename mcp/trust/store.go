package trust

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"time"

	"github.com/kin-dev/kin/agent/ledger"
	"github.com/kin-dev/kin/mcp/config"
)

// FileName is the file, inside KIN_HOME, that holds the grants: the one
// trust ledger (package ledger), whose launches section is this package's.
// Earlier kins kept them in mcp_trust.json, which the ledger carries over.
const FileName = ledger.FileName

// ErrNotFound is returned by Revoke when the name has no grant.
var ErrNotFound = errors.New("no trust grant for this server")

// ErrNotTrustable is returned by Trust for a launch that cannot be
// trusted: a foreign, disabled or unnamed server's.
var ErrNotTrustable = errors.New("server cannot be trusted")

// Entry is one persistent grant, as grants/list shows it.
type Entry struct {
	Name      string
	Scope     config.Scope
	Project   string
	Hash      string
	Transport config.Transport
	Display   string // masked launch line
	TrustedAt time.Time
}

// record is a grant as stored, under its launch's Key.
type record struct {
	Launch
	Display   string    `json:"display"`
	TrustedAt time.Time `json:"trustedAt"`
	// ReadOnly are the tools that run without asking: name -> the
	// fingerprint of the definition the person was told about. nil until
	// kin knows them.
	ReadOnly map[string]string `json:"readOnlyTools,omitempty"`
	// Instructions is the hash (InstructionsHash) of the server
	// instructions the person accepted with this launch ("" until kin
	// first saw them): changed ones are withheld from the model until
	// accepted (see package manager).
	Instructions string `json:"instructions,omitempty"`
	// legacy marks a first-release grant seen through this launch.
	legacy bool
}

// legacy is a first-release grant: a server name and its launch hash.
type legacy struct {
	Hash      string           `json:"hash"`
	Transport config.Transport `json:"transport"`
	Display   string           `json:"display"`
	TrustedAt time.Time        `json:"trustedAt"`
}

// file is the launches section of the ledger (the shape mcp_trust.json
// version 2 had).
type file struct {
	Launches map[string]*record
	// Servers are version 1 grants not carried over yet.
	Servers map[string]*legacy
}

// Store is the launch grants of the trust ledger. It keeps no state in
// memory: every call reads the file, so grants made by another kin process
// are seen at once. Writes are locked, atomic and mode 0600.
type Store struct {
	ledger *ledger.Ledger
	now    func() time.Time
}

// Open returns the store of <kinHome>'s ledger. The file need not exist.
func Open(kinHome string) *Store {
	return &Store{ledger: ledger.Open(kinHome), now: time.Now}
}

// Path is the trust file's path.
func (st *Store) Path() string { return st.ledger.Path() }

// IsTrusted reports whether the launch is trusted: a grant for exactly this
// launch, or a first-release grant of a global server with the same name
// and launch hash (the same launch; Trust carries it over). It fails
// closed: false for an unreadable or malformed file and for a launch that
// cannot be trusted.
func (st *Store) IsTrusted(l Launch) bool {
	_, ok := st.lookup(l)
	return ok
}

// Grant is what a grant of a launch allows besides the launch.
type Grant struct {
	// ReadOnly are the read-only tools that run without asking (nil: not
	// known yet).
	ReadOnly map[string]string
	// Instructions is the hash of the accepted server instructions ("":
	// none pinned yet).
	Instructions string
	// FirstRelease marks a version 1 grant of the same global launch,
	// which Trust carries over.
	FirstRelease bool
}

// Granted returns the grant of l, and whether l is trusted at all.
func (st *Store) Granted(l Launch) (Grant, bool) {
	r, ok := st.lookup(l)
	if !ok {
		return Grant{}, false
	}
	return Grant{ReadOnly: r.ReadOnly, Instructions: r.Instructions, FirstRelease: r.legacy}, true
}

func (st *Store) lookup(l Launch) (*record, bool) {
	if !trustable(l) {
		return nil, false
	}
	f, err := st.read()
	if err != nil {
		return nil, false
	}
	if r := f.Launches[l.Key()]; r != nil {
		return r, true
	}
	if old := f.Servers[l.Name]; old != nil && l.Scope == config.ScopeGlobal && old.Hash == l.Hash {
		return &record{Launch: l, Display: old.Display, TrustedAt: old.TrustedAt, legacy: true}, true
	}
	return nil, false
}

// Changed says how the launch differs from an earlier grant of the same
// server (the same name, scope and project): "" when there is none.
func (st *Store) Changed(l Launch) string {
	f, err := st.read()
	if err != nil {
		return ""
	}
	for k, r := range f.Launches {
		if k == l.Key() || r.Name != l.Name || r.Scope != l.Scope || r.Project != l.Project {
			continue
		}
		switch {
		case r.Hash != l.Hash:
			// Hash covers the entry's "sandbox" field too: a person who only
			// changed that must not be told their command changed
			return "its command, arguments, URL, environment, sandbox setting or the variables its headers send changed since you trusted it"
		case r.Executable != l.Executable:
			return fmt.Sprintf("the program it runs is now %s (it was %s when you trusted it)", l.Executable, r.Executable)
		case r.Workdir != l.Workdir:
			return fmt.Sprintf("it now starts in %s (it was %s when you trusted it)", l.Workdir, r.Workdir)
		case !maps.Equal(r.Scripts, l.Scripts):
			return "a file of the project it runs changed since you trusted it"
		}
	}
	if old := f.Servers[l.Name]; old != nil && l.Scope != config.ScopeGlobal {
		return "kin now keys trust on the project a server belongs to, and this grant from an earlier kin did not name one"
	}
	return ""
}

// Previous returns the read-only tools of an earlier grant of the same
// server (the same name, scope and project), for the launch approval of a
// changed launch.
func (st *Store) Previous(l Launch) map[string]string {
	f, err := st.read()
	if err != nil {
		return nil
	}
	for _, r := range f.Launches {
		if r.Name == l.Name && r.Scope == l.Scope && r.Project == l.Project && r.ReadOnly != nil {
			return r.ReadOnly
		}
	}
	return nil
}

// Trust records a grant for the launch, replacing any earlier grant of the
// same server (name, scope and project) and its first-release grant.
// readOnly are the read-only tools the approval listed (nil: not known
// yet; RecordReadOnly fills them in).
func (st *Store) Trust(l Launch, readOnly map[string]string) error {
	if !trustable(l) {
		return fmt.Errorf("%w: %q is foreign, disabled or unnamed", ErrNotTrustable, l.Name)
	}
	r := &record{Launch: l, Display: l.Display, TrustedAt: st.now().UTC().Truncate(time.Second), ReadOnly: readOnly}
	return st.update(func(f *file) error {
		for k, o := range f.Launches {
			if o.Name == l.Name && o.Scope == l.Scope && o.Project == l.Project {
				delete(f.Launches, k)
			}
		}
		delete(f.Servers, l.Name)
		f.Launches[l.Key()] = r
		return nil
	})
}

// RecordReadOnly keeps, for a trusted launch whose grant lists no
// read-only tools yet, those of its first connection; it reports whether it
// did (then the caller tells the person which they are).
func (st *Store) RecordReadOnly(l Launch, tools map[string]string) (bool, error) {
	recorded := false
	err := st.update(func(f *file) error {
		r := f.Launches[l.Key()]
		if r == nil || r.ReadOnly != nil {
			return errUnchanged
		}
		r.ReadOnly = maps.Clone(tools)
		if r.ReadOnly == nil {
			r.ReadOnly = map[string]string{}
		}
		recorded = true
		return nil
	})
	if errors.Is(err, errUnchanged) {
		err = nil
	}
	return recorded, err
}

var errUnchanged = errors.New("unchanged")

// PinInstructions records hash as the accepted server instructions of a
// trusted launch: only when none is pinned yet (the first connection after
// the person trusted it), or, with replace, in place of the pinned one (the
// person accepted changed instructions). It reports whether it did.
func (st *Store) PinInstructions(l Launch, hash string, replace bool) (bool, error) {
	pinned := false
	err := st.update(func(f *file) error {
		r := f.Launches[l.Key()]
		if r == nil || (r.Instructions != "" && !replace) || r.Instructions == hash {
			return errUnchanged
		}
		r.Instructions, pinned = hash, true
		return nil
	})
	if errors.Is(err, errUnchanged) {
		err = nil
	}
	return pinned, err
}

// Revoke removes every grant of the named server; ErrNotFound if there is
// none.
func (st *Store) Revoke(name string) error {
	return st.update(func(f *file) error {
		found := false
		for k, r := range f.Launches {
			if r.Name == name {
				delete(f.Launches, k)
				found = true
			}
		}
		if _, ok := f.Servers[name]; ok {
			delete(f.Servers, name)
			found = true
		}
		if !found {
			return fmt.Errorf("%w: %q", ErrNotFound, name)
		}
		return nil
	})
}

// List returns every grant sorted by name, then project; nothing if the
// file is absent or unreadable (see Check).
func (st *Store) List() []Entry {
	f, err := st.read()
	if err != nil {
		return nil
	}
	out := make([]Entry, 0, len(f.Launches)+len(f.Servers))
	for _, r := range f.Launches {
		out = append(out, Entry{Name: r.Name, Scope: r.Scope, Project: r.Project, Hash: r.Hash, Transport: r.Transport, Display: r.Display, TrustedAt: r.TrustedAt})
	}
	for name, r := range f.Servers {
		if r != nil {
			out = append(out, Entry{Name: name, Hash: r.Hash, Transport: r.Transport, Display: r.Display, TrustedAt: r.TrustedAt})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Project < out[j].Project
	})
	return out
}

// Check reports a trust file that exists but cannot be read or parsed (while
// it is broken nothing is trusted and Trust/Revoke refuse to overwrite it).
func (st *Store) Check() error {
	_, err := st.read()
	return err
}

func trustable(l Launch) bool {
	return l.Name != "" && (l.Scope == config.ScopeProject || l.Scope == config.ScopeGlobal || l.Scope == config.ScopeClient)
}

func (st *Store) read() (*file, error) {
	lf, err := st.ledger.Read()
	if err != nil {
		return nil, err
	}
	return decodeFile(lf)
}

// decodeFile reads the launches section of the ledger; a record that
// cannot be read is left out (its launch asks again).
func decodeFile(lf *ledger.File) (*file, error) {
	f := &file{Launches: map[string]*record{}, Servers: map[string]*legacy{}}
	for k, raw := range lf.Launches {
		var r record
		if json.Unmarshal(raw, &r) == nil && len(bytes.TrimSpace(raw)) > 0 && string(raw) != "null" {
			f.Launches[k] = &r
		}
	}
	for k, raw := range lf.Servers {
		var r legacy
		if json.Unmarshal(raw, &r) == nil && string(raw) != "null" {
			f.Servers[k] = &r
		}
	}
	return f, nil
}

func (st *Store) update(fn func(*file) error) error {
	return st.ledger.Update(func(lf *ledger.File) error {
		f, err := decodeFile(lf)
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
		lf.Launches = map[string]json.RawMessage{}
		for k, r := range f.Launches {
			raw, err := json.Marshal(r)
			if err != nil {
				return err
			}
			lf.Launches[k] = raw
		}
		lf.Servers = nil
		for k, r := range f.Servers {
			raw, err := json.Marshal(r)
			if err != nil {
				return err
			}
			if lf.Servers == nil {
				lf.Servers = map[string]json.RawMessage{}
			}
			lf.Servers[k] = raw
		}
		return nil
	})
}
