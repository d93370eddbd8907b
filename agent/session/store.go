package session

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kin-dev/kin/agent/lockedfile"
)

// Info describes a session for pickers.
type Info struct {
	SessionID string    `json:"sessionId"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when the session last changed: its last turn ended, it
	// was named, or it was made.
	UpdatedAt time.Time `json:"updatedAt"`
	Turns     int       `json:"turns"`
	// Cwd and AdditionalDirectories are the session's workspace folders
	// (empty for a session recorded before sessions kept them).
	Cwd                   string   `json:"cwd,omitempty"`
	AdditionalDirectories []string `json:"additionalDirectories,omitempty"`
	// Mode is the session's mode (ask, agent, auto-edit; "" is agent) as
	// its log says. The index does not keep it: List leaves it empty.
	Mode string `json:"mode,omitempty"`
	// ParentID is, for a subagent's session, the session it works for.
	ParentID string `json:"parentId,omitempty"`
	// Origin says what made the session when it was not a person at an
	// editor ("chat-oneshot": `kin chat "question"`; "chat-piped": kin chat
	// reading a pipe); "" for a conversation a person had. Session lists
	// may leave such sessions out.
	Origin string `json:"origin,omitempty"`
}

// ValidOrigin reports whether o can be a session's origin: empty, or a
// short name of lower-case letters, digits and dashes.
func ValidOrigin(o string) bool {
	if len(o) > 32 {
		return false
	}
	for _, c := range o {
		if !(c == '-' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// add folds one record into the summary.
func (i *Info) add(r Record) {
	switch r.Type {
	case TypeSession:
		i.Title, i.CreatedAt, i.Mode, i.Origin = r.Title, r.Time, r.Mode, r.Origin
		i.setRoots(r.Roots)
		if r.Parent != nil && validID(r.Parent.SessionID) {
			// (only an id: it is written into the index's lines as it is)
			i.ParentID = r.Parent.SessionID
		}
	case TypeMode:
		i.Mode = r.Mode
		return // not a change pickers sort by
	case TypeTitle:
		i.Title = r.Title
	case TypeTurn:
		i.Turns++
	default:
		return
	}
	if r.Time.After(i.UpdatedAt) {
		i.UpdatedAt = r.Time
	}
}

func (i *Info) setRoots(roots []string) {
	i.Cwd, i.AdditionalDirectories = "", nil
	if len(roots) > 0 {
		i.Cwd = roots[0]
		i.AdditionalDirectories = append([]string(nil), roots[1:]...)
	}
}

func (i Info) roots() []string {
	if i.Cwd == "" {
		return nil
	}
	return append([]string{i.Cwd}, i.AdditionalDirectories...)
}

// ErrNotFound is returned for a session id with no log.
var ErrNotFound = errors.New("session not found")

// validID reports whether id looks like a session id (s_ and up to 64 of
// [0-9A-Za-z_]), so an id from the editor can never name another file.
func validID(id string) bool {
	rest, ok := strings.CutPrefix(id, "s_")
	if !ok || len(rest) == 0 || len(rest) > 64 {
		return false
	}
	for _, c := range rest {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// Store is the sessions folder: one log per session and the index.
type Store struct {
	dir   string
	idx   *index
	views viewCache // pages read lately (viewcache.go)
}

// NewStore uses dir (created 0700 on first write).
func NewStore(dir string) *Store { return &Store{dir: dir, idx: newIndex(dir)} }

func (s *Store) path(id string) (string, error) {
	if !validID(id) {
		return "", fmt.Errorf("%w: %q is not a session id", ErrNotFound, id)
	}
	return filepath.Join(s.dir, id+".jsonl"), nil
}

// Create starts a new session log with its first record (durable before
// Create returns) and returns it owned by the caller. origin is what made
// it ("" for a person at an editor; see Info.Origin).
func (s *Store) Create(title string, roots []string, mode, origin string) (Info, *Log, error) {
	if !ValidOrigin(origin) {
		return Info{}, nil, fmt.Errorf("origin %q is not a short name of lower-case letters, digits and dashes", origin)
	}
	return s.create(Record{Type: TypeSession, Title: title, Roots: roots, Mode: mode, Origin: origin})
}

// CreateChild is Create for a subagent's session: its first record names
// its parent, and the index lists it under the parent.
func (s *Store) CreateChild(title string, roots []string, mode string, parent Lineage) (Info, *Log, error) {
	return s.create(Record{Type: TypeSession, Title: title, Roots: roots, Mode: mode, Parent: &parent})
}

// Children lists the sessions whose parent is parentID, newest first,
// from the index.
func (s *Store) Children(parentID string) ([]Info, error) {
	all, err := s.List()
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, i := range all {
		if i.ParentID == parentID {
			out = append(out, i)
		}
	}
	return out, nil
}

// create writes a new log whose first record is first (its id and time
// set here).
// CreatePrepared is Create for a session that needs its id before its
// first record is written (a git worktree named after it): prepare gets
// the id and returns the session's roots, and an undo run when the log
// cannot be made after all.
func (s *Store) CreatePrepared(title string, mode, origin string, prepare func(id string) ([]string, func(), error)) (Info, *Log, error) {
	if !ValidOrigin(origin) {
		return Info{}, nil, fmt.Errorf("origin %q is not a short name of lower-case letters, digits and dashes", origin)
	}
	return s.createWith(Record{Type: TypeSession, Title: title, Mode: mode, Origin: origin}, nil, prepare)
}

func (s *Store) create(first Record) (Info, *Log, error) { return s.createWith(first, nil, nil) }

// CreateWith is Create for a session that starts with records (a fork's
// copy of another session's history): copy writes them one at a time, with
// write, so a long history is never held whole. The log gets its session's
// name only once they are all written and durable, so a kin stopped
// halfway leaves no session holding part of them (only a hidden file,
// which no reader takes for a session).
func (s *Store) CreateWith(title string, roots []string, mode string, copy func(write func(Record) error) error) (Info, *Log, error) {
	return s.createWith(Record{Type: TypeSession, Title: title, Roots: roots, Mode: mode}, copy, nil)
}

func (s *Store) createWith(first Record, rest func(write func(Record) error) error, prepare func(id string) ([]string, func(), error)) (_ Info, _ *Log, err error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return Info{}, nil, err
	}
	now := time.Now().UTC()
	var rnd [3]byte
	_, _ = rand.Read(rnd[:])
	id := "s_" + now.Format("20060102T150405") + "_" + hex.EncodeToString(rnd[:])
	if prepare != nil {
		roots, undo, perr := prepare(id)
		if perr != nil {
			return Info{}, nil, perr
		}
		first.Roots = roots
		defer func() {
			if err != nil && undo != nil {
				undo()
			}
		}()
	}
	p, _ := s.path(id)
	before := s.idx.dirTime()
	name := p
	if rest != nil {
		name = filepath.Join(s.dir, "."+id+".jsonl.part") // not a session's name until whole
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return Info{}, nil, err
	}
	if err := lockedfile.TryLock(f); err != nil {
		f.Close()
		return Info{}, nil, err
	}
	log := &Log{id: id, path: name, idx: s.idx, f: f}
	first.Time, first.SessionID = now, id
	var info Info
	info.SessionID = id
	write := func(r Record) error {
		// Written as Append writes, but without its notes to the index:
		// the index hears of the session once, whole, below.
		if r.Time.IsZero() {
			r.Time = now
		}
		r = Fit(r)
		b, err := encode(r)
		if err == nil {
			_, err = log.write(b)
		}
		if err == nil {
			info.add(r)
		}
		return err
	}
	err = write(first)
	if err == nil && rest != nil {
		err = rest(write)
	}
	if err == nil {
		err = log.Sync()
	}
	if err == nil && rest != nil {
		err = log.rename(p)
	}
	if err != nil {
		log.Delete()
		return Info{}, nil, err
	}
	syncDir(s.dir)
	s.idx.created(info, before)
	return info, log, nil
}

// syncDir makes a new file's name durable; best effort.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// Open takes ownership of a session's log for appending. It fails with
// ErrOwned while another kin has it open; a log kin cannot write is still
// owned, with ReadOnly saying why.
func (s *Store) Open(id string) (*Log, error) {
	p, err := s.path(id)
	if err != nil {
		return nil, err
	}
	return openOwned(id, p, s.idx)
}

// Exists reports whether a session has a log.
func (s *Store) Exists(id string) bool {
	p, err := s.path(id)
	if err != nil {
		return false
	}
	_, err = os.Stat(p)
	return err == nil
}

// Refresh records a session's summary in the index, as an owner's pass over
// the log found it: that heals a row a crash left behind.
func (s *Store) Refresh(info Info) { s.idx.refresh(info) }

// Delete removes a session nobody owns; ErrOwned while another kin has it
// open.
func (s *Store) Delete(id string) error {
	log, err := s.Open(id)
	if err != nil {
		return err
	}
	return log.Delete()
}

// List returns every session, newest first, from the index. The slice is
// shared: callers must not change it.
func (s *Store) List() ([]Info, error) { return s.idx.list() }

// summarize reads a log's summary, decoding only what a summary needs.
func summarize(path, id string) (Info, bool) {
	f, err := os.Open(path)
	if err != nil {
		return Info{}, false
	}
	defer f.Close()
	info := Info{SessionID: id}
	found := false
	var h struct {
		Type   string    `json:"type"`
		Time   time.Time `json:"time"`
		Title  string    `json:"title"`
		Roots  []string  `json:"roots"`
		Origin string    `json:"origin"`
		Parent *Lineage  `json:"parent"`
	}
	_, err = eachLine(f, 0, func(_ int64, line []byte) {
		h.Type, h.Title, h.Roots, h.Origin, h.Parent = "", "", nil, "", nil
		if json.Unmarshal(line, &h) != nil || h.Type == "" {
			return
		}
		found = true
		origin := h.Origin
		if !ValidOrigin(origin) {
			origin = ""
		}
		info.add(Record{Type: h.Type, Time: h.Time, Title: h.Title, Roots: h.Roots, Origin: origin, Parent: h.Parent})
	})
	return info, err == nil && found
}
