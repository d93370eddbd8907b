package trust

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/kin-dev/kin/agent/lockedfile"
	"github.com/kin-dev/kin/mcp/config"
)

// FileName is the trust file's name inside KIN_HOME.
const FileName = "mcp_trust.json"

// ErrNotFound is returned by Revoke when the name has no grant.
var ErrNotFound = errors.New("no trust grant for this server")

// ErrNotTrustable is returned by Trust for a server that cannot be trusted:
// a foreign or disabled one, whose launch fields are not resolved.
var ErrNotTrustable = errors.New("server cannot be trusted")

// Entry is one persistent grant.
type Entry struct {
	Name      string           `json:"name"`
	Hash      string           `json:"hash"`
	Transport config.Transport `json:"transport"`
	Display   string           `json:"display"` // masked launch line, for /grants
	TrustedAt time.Time        `json:"trustedAt"`
}

// record is a grant as stored, under its server name.
type record struct {
	Hash      string           `json:"hash"`
	Transport config.Transport `json:"transport"`
	Display   string           `json:"display"`
	TrustedAt time.Time        `json:"trustedAt"`
}

// file is the on-disk shape of mcp_trust.json.
type file struct {
	Version int                `json:"version"`
	Servers map[string]*record `json:"servers"`
}

// Store is the trust file. It keeps no state in memory: every call reads
// the file, so grants made by another kin process are seen at once. Writes
// are locked, atomic and mode 0600.
type Store struct {
	path string
	now  func() time.Time
}

// Open returns the store for <kinHome>/mcp_trust.json. The file need not
// exist.
func Open(kinHome string) *Store {
	return &Store{path: filepath.Join(kinHome, FileName), now: time.Now}
}

// Path is the trust file's path.
func (st *Store) Path() string { return st.path }

// IsTrusted reports whether a grant exists for the server's name with the
// server's current launch hash. It fails closed: false for an unreadable or
// malformed file and for servers that are not connectable.
func (st *Store) IsTrusted(s config.Server) bool {
	if !s.Connectable() {
		return false
	}
	f, err := st.read()
	if err != nil {
		return false
	}
	e, ok := f.Servers[s.Name]
	return ok && e != nil && e.Hash == Hash(s)
}

// Trust records a grant for the server, replacing any earlier grant of that
// name. It records the name, hash, transport, masked display line and time.
func (st *Store) Trust(s config.Server) error {
	if !s.Connectable() || s.Name == "" {
		return fmt.Errorf("%w: %q is foreign, disabled or unnamed", ErrNotTrustable, s.Name)
	}
	e := &record{
		Hash:      Hash(s),
		Transport: s.Transport,
		Display:   s.Display().Launch,
		TrustedAt: st.now().UTC().Truncate(time.Second),
	}
	return st.update(func(f *file) error {
		f.Servers[s.Name] = e
		return nil
	})
}

// Revoke removes the grant for name; ErrNotFound if there is none.
func (st *Store) Revoke(name string) error {
	return st.update(func(f *file) error {
		if _, ok := f.Servers[name]; !ok {
			return fmt.Errorf("%w: %q", ErrNotFound, name)
		}
		delete(f.Servers, name)
		return nil
	})
}

// List returns every grant sorted by name; nothing if the file is absent or
// unreadable (see Check).
func (st *Store) List() []Entry {
	f, err := st.read()
	if err != nil {
		return nil
	}
	out := make([]Entry, 0, len(f.Servers))
	for name, e := range f.Servers {
		if e != nil {
			out = append(out, Entry{Name: name, Hash: e.Hash, Transport: e.Transport, Display: e.Display, TrustedAt: e.TrustedAt})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Check reports a trust file that exists but cannot be read or parsed (while
// it is broken nothing is trusted and Trust/Revoke refuse to overwrite it).
func (st *Store) Check() error {
	_, err := st.read()
	return err
}

func (st *Store) read() (*file, error) {
	data, err := os.ReadFile(st.path)
	if errors.Is(err, fs.ErrNotExist) {
		return &file{Version: 1, Servers: map[string]*record{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read trust file: %w", err)
	}
	return parse(st.path, data)
}

func parse(path string, data []byte) (*file, error) {
	f := &file{}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, f); err != nil {
			return nil, fmt.Errorf("trust file %s is malformed; fix or delete it (every server will ask again)", path)
		}
	}
	if f.Version == 0 {
		f.Version = 1
	}
	if f.Servers == nil {
		f.Servers = map[string]*record{}
	}
	return f, nil
}

func (st *Store) update(fn func(*file) error) error {
	return lockedfile.Update(st.path, func(data []byte, _ bool) ([]byte, error) {
		f, err := parse(st.path, data)
		if err != nil {
			return nil, err
		}
		if err := fn(f); err != nil {
			return nil, err
		}
		out, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			return nil, err
		}
		return append(out, '\n'), nil
	})
}
