package permission

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kin-dev/kin/agent/lockedfile"
	"github.com/kin-dev/kin/agent/tool"
)

// Grant is a standing "always allow".
type Grant struct {
	ID   string `json:"id"`
	Type string `json:"type"` // bash, tool, mcp (trust grants live in the MCP trust store)
	Key  string `json:"key"`
	// Fingerprint is set on MCP grants: the tool definition (description,
	// input schema, annotations) the person approved. The grant answers
	// only calls of that definition.
	Fingerprint string    `json:"fingerprint,omitempty"`
	Label       string    `json:"label"`
	Scope       string    `json:"scope"` // session or permanent
	SessionID   string    `json:"sessionId,omitempty"`
	Created     time.Time `json:"created"`
}

// covers reports whether the grant answers calls that offer g.
func (x Grant) covers(g tool.Grant) bool {
	return x.Key == g.Key && x.Fingerprint == g.Fingerprint
}

// Grants holds session grants in memory and permanent ones in a 0600 file
// that other kin processes edit too (another `kin serve`, `kin grants
// revoke`). The file is the only truth for permanent grants: every change
// is one locked read-modify-write (package lockedfile, as for
// mcp_trust.json), so two processes granting at once both keep their
// grant, and every decision a permanent grant may answer first re-reads the
// file if it changed since the last read (a stat: same file, size and
// modification time), so a grant revoked elsewhere stops answering at once
// and is never written back.
type Grants struct {
	path string // "" keeps permanent grants in memory only

	// mu guards session, seq, memory and the cache of the file (cached,
	// stamp, readErr).
	mu      sync.Mutex
	session []Grant
	seq     int
	memory  []Grant     // permanent grants when path is ""
	cached  []Grant     // the file's grants as last read
	stamp   fs.FileInfo // the file as last read; nil: absent or not read
	readErr error       // why the file as last read grants nothing
}

// LoadGrants opens the permanent grants file (absent is fine). The error
// reports a file that is not valid JSON: it is left as it is, grants
// nothing, and is never overwritten until it is fixed.
func LoadGrants(path string) (*Grants, error) {
	g := &Grants{path: path}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.permanentLocked()
	return g, g.readErr
}

// Allows reports whether a grant covers g in the session: same key, and
// for MCP grants the same tool definition.
func (g *Grants) Allows(sessionID string, gr tool.Grant) bool {
	if gr.Key == "" {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, x := range g.session {
		if x.SessionID == sessionID && x.covers(gr) {
			return true
		}
	}
	for _, x := range g.permanentLocked() {
		if x.covers(gr) {
			return true
		}
	}
	return false
}

// Add records a grant for the session, or for every session when permanent.
func (g *Grants) Add(sessionID string, gr tool.Grant, permanent bool) (Grant, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seq++
	x := Grant{Type: typeOf(gr.Key), Key: gr.Key, Fingerprint: gr.Fingerprint, Label: gr.Label, Created: time.Now().UTC()}
	if !permanent {
		x.ID, x.Scope, x.SessionID = fmt.Sprintf("g_%d", g.seq), "session", sessionID
		g.session = append(g.session, x)
		return x, nil
	}
	x.ID, x.Scope = fmt.Sprintf("p_%d_%d", time.Now().UnixNano(), g.seq), "permanent"
	err := g.updateLocked(func(list []Grant) ([]Grant, bool) {
		for _, y := range list {
			if y.covers(gr) {
				x = y // granted already (by another process, say)
				return list, false
			}
		}
		return append(list, x), true
	})
	return x, err
}

// List returns all grants, permanent first.
func (g *Grants) List() []Grant {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := append(append([]Grant(nil), g.permanentLocked()...), g.session...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Scope > out[j].Scope })
	return out
}

// Revoke removes a grant by id. It reports whether one was found.
func (g *Grants) Revoke(id string) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, x := range g.session {
		if x.ID == id {
			g.session = append(g.session[:i], g.session[i+1:]...)
			return true, nil
		}
	}
	found := false
	err := g.updateLocked(func(list []Grant) ([]Grant, bool) {
		for i, x := range list {
			if x.ID == id {
				found = true
				return append(list[:i], list[i+1:]...), true
			}
		}
		return list, false
	})
	return found, err
}

// RevokeKey removes the grants with this key (a redefined MCP tool) but
// those given for the definition keep ("" removes them all). It reports
// whether one was removed.
func (g *Grants) RevokeKey(key, keep string) (bool, error) {
	stale := func(x Grant) bool { return x.Key == key && (keep == "" || x.Fingerprint != keep) }
	g.mu.Lock()
	defer g.mu.Unlock()
	n := len(g.session)
	g.session = deleteFunc(g.session, stale)
	removed := len(g.session) != n
	any := false
	for _, x := range g.permanentLocked() {
		any = any || stale(x)
	}
	if !any {
		return removed, nil // nothing to write: no lock, no file touched
	}
	err := g.updateLocked(func(list []Grant) ([]Grant, bool) {
		kept := deleteFunc(list, stale)
		if len(kept) == len(list) {
			return list, false
		}
		removed = true
		return kept, true
	})
	return removed, err
}

// DropSession forgets a session's grants.
func (g *Grants) DropSession(sessionID string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.session = deleteFunc(g.session, func(x Grant) bool { return x.SessionID == sessionID })
}

// permanentLocked returns the permanent grants, re-reading the file when it
// is not the one last read. A file that cannot be read or parsed grants
// nothing (readErr says why).
func (g *Grants) permanentLocked() []Grant {
	if g.path == "" {
		return g.memory
	}
	fi, err := os.Stat(g.path)
	if errors.Is(err, fs.ErrNotExist) {
		g.cached, g.stamp, g.readErr = nil, nil, nil
		return nil
	}
	if err == nil && g.stamp != nil && os.SameFile(fi, g.stamp) && fi.Size() == g.stamp.Size() && fi.ModTime().Equal(g.stamp.ModTime()) {
		return g.cached
	}
	data, err := os.ReadFile(g.path)
	if err != nil {
		g.cached, g.stamp, g.readErr = nil, nil, fmt.Errorf("%s cannot be read (permanent grants ignored): %v", g.path, err)
		return nil
	}
	list, err := g.parse(data)
	g.cached, g.stamp, g.readErr = list, fi, err
	return list
}

func (g *Grants) parse(data []byte) ([]Grant, error) {
	var list []Grant
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON (left as it is, permanent grants ignored until it is fixed or deleted): %v", g.path, err)
	}
	return list, nil
}

// updateLocked is one locked read-modify-write of the permanent grants:
// fn gets the grants as they are on disk now and returns the new list and
// whether it changed. A malformed file is never overwritten.
func (g *Grants) updateLocked(fn func([]Grant) ([]Grant, bool)) error {
	if g.path == "" {
		g.memory, _ = fn(g.memory)
		return nil
	}
	g.stamp = nil // whatever happens, read the file again next time
	return lockedfile.Update(g.path, func(data []byte, _ bool) ([]byte, error) {
		list, err := g.parse(data)
		if err != nil {
			return nil, err
		}
		list, changed := fn(list)
		if !changed {
			return nil, nil
		}
		if list == nil {
			list = []Grant{}
		}
		b, err := json.MarshalIndent(list, "", "  ")
		if err != nil {
			return nil, err
		}
		return append(b, '\n'), nil
	})
}

func deleteFunc(list []Grant, del func(Grant) bool) []Grant {
	out := list[:0]
	for _, x := range list {
		if !del(x) {
			out = append(out, x)
		}
	}
	return out
}

func typeOf(key string) string {
	if i := strings.IndexByte(key, ':'); i > 0 {
		return key[:i]
	}
	return "tool"
}
