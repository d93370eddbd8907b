package permission

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Grant is a standing "always allow".
type Grant struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"` // bash, tool, mcp (trust grants live in the MCP trust store)
	Key       string    `json:"key"`
	Label     string    `json:"label"`
	Scope     string    `json:"scope"` // session or permanent
	SessionID string    `json:"sessionId,omitempty"`
	Created   time.Time `json:"created"`
}

// Grants holds session grants in memory and permanent ones in a 0600 file.
type Grants struct {
	path string // "" keeps permanent grants in memory only

	// mu guards session, permanent and seq.
	mu        sync.Mutex
	session   []Grant
	permanent []Grant
	seq       int
}

// LoadGrants reads the permanent grants file (absent is fine).
func LoadGrants(path string) (*Grants, error) {
	g := &Grants{path: path}
	if path == "" {
		return g, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return g, nil
	}
	if err != nil {
		return g, err
	}
	if err := json.Unmarshal(b, &g.permanent); err != nil {
		return g, fmt.Errorf("%s is not valid JSON (left as it is, permanent grants ignored): %v", path, err)
	}
	return g, nil
}

// Allows reports whether a grant covers key in the session.
func (g *Grants) Allows(sessionID, key string) bool {
	if key == "" {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, x := range g.permanent {
		if x.Key == key {
			return true
		}
	}
	for _, x := range g.session {
		if x.Key == key && x.SessionID == sessionID {
			return true
		}
	}
	return false
}

// Add records a grant for the session, or for every session when permanent.
func (g *Grants) Add(sessionID, key, label string, permanent bool) (Grant, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seq++
	gr := Grant{Type: typeOf(key), Key: key, Label: label, Created: time.Now().UTC()}
	if permanent {
		gr.ID, gr.Scope = fmt.Sprintf("p_%d_%d", time.Now().UnixNano(), g.seq), "permanent"
		g.permanent = append(g.permanent, gr)
		return gr, g.saveLocked()
	}
	gr.ID, gr.Scope, gr.SessionID = fmt.Sprintf("g_%d", g.seq), "session", sessionID
	g.session = append(g.session, gr)
	return gr, nil
}

// List returns all grants, permanent first.
func (g *Grants) List() []Grant {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := append(append([]Grant(nil), g.permanent...), g.session...)
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
	for i, x := range g.permanent {
		if x.ID == id {
			g.permanent = append(g.permanent[:i], g.permanent[i+1:]...)
			return true, g.saveLocked()
		}
	}
	return false, nil
}

// RevokeKey removes every grant with this key (a redefined MCP tool).
func (g *Grants) RevokeKey(key string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	keep := g.session[:0]
	for _, x := range g.session {
		if x.Key != key {
			keep = append(keep, x)
		}
	}
	g.session = keep
	n := len(g.permanent)
	kp := g.permanent[:0]
	for _, x := range g.permanent {
		if x.Key != key {
			kp = append(kp, x)
		}
	}
	g.permanent = kp
	if len(kp) != n {
		return g.saveLocked()
	}
	return nil
}

// DropSession forgets a session's grants.
func (g *Grants) DropSession(sessionID string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	keep := g.session[:0]
	for _, x := range g.session {
		if x.SessionID != sessionID {
			keep = append(keep, x)
		}
	}
	g.session = keep
}

func (g *Grants) saveLocked() error {
	if g.path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(g.path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(g.permanent, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(g.path), ".grants-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), g.path)
}

func typeOf(key string) string {
	if i := strings.IndexByte(key, ':'); i > 0 {
		return key[:i]
	}
	return "tool"
}
