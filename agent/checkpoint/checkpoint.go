// Package checkpoint keeps, for every turn, what the files kin's tools
// changed were before the turn changed them (their content, or that they
// did not exist), so that the turn's file changes can be undone: also after
// kin restarted, and without git.
//
// Checkpoints live under $KIN_HOME/checkpoints/<session>/<turn>/: a manifest
// (turn.json) and the contents it names (blobs, by their SHA-256). Files are
// 0600 and folders 0700, since they hold workspace files; a session's
// checkpoints go with the session.
//
// It must never write a workspace file except to restore one on Undo (and
// then through the session's file access, as kin's tools write, beneath
// the workspace folder), it never overwrites a file that someone changed
// after kin's tools wrote it (a conflict, left as it is), and it never
// follows a path that no longer resolves to the file kin changed (a folder
// along it replaced by a symlink since: boundary.Unchanged), so an undo
// cannot delete or overwrite anything outside the workspace.
package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/kin-dev/kin/agent/lockedfile"
	"github.com/kin-dev/kin/agent/session"
)

// Errors Undo reports.
var (
	// ErrNothingToUndo: no turn of the session changed files (that is not
	// undone already).
	ErrNothingToUndo = errors.New("no turn of this session changed files with kin's tools (or every such turn is undone already)")
	// ErrNoCheckpoint: the named turn changed no files with kin's tools.
	ErrNoCheckpoint = errors.New("this turn changed no files with kin's tools")
	// ErrUndone: the named turn was undone already.
	ErrUndone = errors.New("this turn's file changes were undone already")
)

const manifestName = "turn.json"

// Change is one write a tool is about to make.
type Change struct {
	SessionID, TurnID, CallID string
	// Path is the file written: absolute, clean, with symlinks resolved.
	Path string
	// Old is what is there now (what Undo puts back); Existed is false
	// when there is no file yet (Undo removes the one the turn created).
	Old     []byte
	Existed bool
	// New is what the tool writes: what Undo expects to find.
	New []byte
}

// Store is the checkpoints folder.
type Store struct {
	dir string

	// mu serialises manifest updates (a manifest is read, changed and
	// replaced whole).
	mu sync.Mutex
}

// New keeps checkpoints in dir ($KIN_HOME/checkpoints), made on first use.
func New(dir string) *Store { return &Store{dir: dir} }

// manifest is one turn's checkpoint.
type manifest struct {
	TurnID string `json:"turnId"`
	// Seq orders a session's turns (nanoseconds at the first change).
	Seq      int64                 `json:"seq"`
	Files    []file                `json:"files"`
	Calls    []session.NotUndoable `json:"notUndoable,omitempty"`
	UndoneAt *time.Time            `json:"undoneAt,omitempty"`
}

// file is one file the turn changed.
type file struct {
	Path    string `json:"path"`
	Existed bool   `json:"existed"`
	// Old is the blob of the content before the turn's first change (""
	// when the file did not exist); After the blob of what the turn's last
	// change wrote.
	Old   string   `json:"old,omitempty"`
	After string   `json:"after"`
	Calls []string `json:"calls"`
	// Between says that a later change of the turn found the file other
	// than the turn's earlier change left it: someone (the person typing
	// in their editor) changed it meanwhile, and the turn's later changes
	// build on that. Undo then leaves it as it is, since putting back Old
	// would throw their change away.
	Between bool `json:"between,omitempty"`
}

// Before keeps what c replaces, durably, before the write happens: a kin
// that stops right after the write can still undo it. Only a turn's first
// change of a file keeps the old content (that is the state undo returns
// to); later ones move what the turn is expected to have left. The write's
// caller runs revert when the write was surely not made (refused, a
// conflict), so undo never reports a change that did not happen.
func (s *Store) Before(c Change) (revert func(), err error) {
	dir, err := s.turnDir(c.SessionID, c.TurnID)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, err := s.load(dir)
	if err != nil {
		return nil, err
	}
	m := prev
	m.Files = append([]file(nil), prev.Files...)
	if m.TurnID == "" {
		m = manifest{TurnID: c.TurnID, Seq: time.Now().UnixNano()}
	}
	after, err := s.putBlob(c.SessionID, c.New)
	if err != nil {
		return nil, err
	}
	found := false
	for i := range m.Files {
		if f := &m.Files[i]; f.Path == c.Path {
			if sum := sha256.Sum256(c.Old); !c.Existed || hex.EncodeToString(sum[:]) != f.After {
				f.Between = true
			}
			f.After = after
			f.Calls = appendOnce(append([]string(nil), f.Calls...), c.CallID)
			found = true
		}
	}
	if !found {
		f := file{Path: c.Path, Existed: c.Existed, After: after, Calls: []string{c.CallID}}
		if c.Existed {
			if f.Old, err = s.putBlob(c.SessionID, c.Old); err != nil {
				return nil, err
			}
		}
		m.Files = append(m.Files, f)
	}
	if err := s.save(dir, m, true); err != nil {
		return nil, err
	}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if prev.TurnID == "" {
			prev = manifest{TurnID: c.TurnID, Seq: m.Seq} // no files: nothing to undo
		}
		_ = s.save(dir, prev, false) // at worst undo finds the file as it was
	}, nil
}

// Untracked notes a call of the turn whose changes kin cannot undo (a
// command: it may change anything, and only what kin's file tools wrote is
// kept).
func (s *Store) Untracked(sessionID, turnID string, call session.NotUndoable) error {
	dir, err := s.turnDir(sessionID, turnID)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.load(dir)
	if err != nil {
		return err
	}
	if m.TurnID == "" {
		m = manifest{TurnID: turnID, Seq: time.Now().UnixNano()}
	}
	for _, c := range m.Calls {
		if c.CallID == call.CallID {
			return nil
		}
	}
	m.Calls = append(m.Calls, call)
	return s.save(dir, m, false) // a note for the report: not worth a sync
}

// Turns lists the turns of a session whose file changes can be undone,
// oldest first.
func (s *Store) Turns(sessionID string) ([]string, error) {
	ms, err := s.manifests(sessionID)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range ms {
		if m.UndoneAt == nil && len(m.Files) > 0 {
			out = append(out, m.TurnID)
		}
	}
	return out, nil
}

// Delete removes a session's checkpoints.
func (s *Store) Delete(sessionID string) error {
	if !validID(sessionID) {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return os.RemoveAll(filepath.Join(s.dir, sessionID))
}

// Prune removes the checkpoints of every session exists says is gone (a
// session deleted while kin was not running, or by another kin).
func (s *Store) Prune(exists func(sessionID string) bool) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() && validID(e.Name()) && !exists(e.Name()) {
			_ = s.Delete(e.Name())
		}
	}
}

func (s *Store) manifests(sessionID string) ([]manifest, error) {
	if !validID(sessionID) {
		return nil, fmt.Errorf("checkpoint: %q is not a session id", sessionID)
	}
	entries, err := os.ReadDir(filepath.Join(s.dir, sessionID))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []manifest
	for _, e := range entries {
		if !e.IsDir() || !validID(e.Name()) {
			continue
		}
		m, err := s.load(filepath.Join(s.dir, sessionID, e.Name()))
		if err != nil {
			return nil, err
		}
		if m.TurnID != "" {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Seq != out[j].Seq {
			return out[i].Seq < out[j].Seq
		}
		return out[i].TurnID < out[j].TurnID
	})
	return out, nil
}

func (s *Store) turnDir(sessionID, turnID string) (string, error) {
	if !validID(sessionID) || !validID(turnID) {
		return "", fmt.Errorf("checkpoint: %q / %q is not a session and turn id", sessionID, turnID)
	}
	return filepath.Join(s.dir, sessionID, turnID), nil
}

// load reads a turn's manifest; a missing one is the zero manifest.
func (s *Store) load(dir string) (manifest, error) {
	var m manifest
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, fmt.Errorf("checkpoint: %v", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("checkpoint: %s is not a checkpoint manifest: %v", filepath.Join(dir, manifestName), err)
	}
	return m, nil
}

// save replaces a turn's manifest. durable makes it, and the blobs it
// names, survive a crash: what a write's undo needs must be on disk before
// the write happens.
func (s *Store) save(dir string, m manifest, durable bool) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("checkpoint: %v", err)
	}
	if durable {
		syncDir(filepath.Join(filepath.Dir(dir), "blobs"))
	}
	if err := writeFile(filepath.Join(dir, manifestName), b, durable); err != nil {
		return err
	}
	if durable {
		syncDir(dir)                             // the manifest's name
		syncDir(filepath.Dir(dir))               // the turn's folder
		syncDir(filepath.Dir(filepath.Dir(dir))) // the session's folder
	}
	return nil
}

// putBlob stores content under its hash in the session's folder (once) and
// returns the hash.
func (s *Store) putBlob(sessionID string, content []byte) (string, error) {
	sum := sha256.Sum256(content)
	h := hex.EncodeToString(sum[:])
	dir := filepath.Join(s.dir, sessionID, "blobs")
	p := filepath.Join(dir, h)
	if _, err := os.Stat(p); err == nil {
		return h, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("checkpoint: %v", err)
	}
	return h, writeFile(p, content, true) // its name is synced with the manifest
}

func (s *Store) blob(sessionID, h string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, sessionID, "blobs", h))
	if err != nil {
		return nil, fmt.Errorf("checkpoint: the kept content is missing: %v", err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != h {
		return nil, errors.New("checkpoint: the kept content is damaged")
	}
	return b, nil
}

// writeFile replaces p with data (lockedfile.Replace: a temporary file
// renamed over it, so a reader or a crash sees the old file or the new
// one). With sync the file's content is on disk before the rename. Its
// mode is 0600: checkpoints are private.
func writeFile(p string, data []byte, sync bool) error {
	if err := lockedfile.ReplaceFile(p, data, lockedfile.Options{Perm: 0o600, Sync: sync}); err != nil {
		return fmt.Errorf("checkpoint: %v", err)
	}
	return nil
}

// syncDir makes the names a folder holds durable; best effort (Windows
// cannot open a folder for it).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// validID accepts kin's session and turn ids (letters, digits, _), so an
// id can never name another folder.
func validID(id string) bool {
	if id == "" || len(id) > 80 {
		return false
	}
	for _, c := range id {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
