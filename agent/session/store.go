package session

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Info describes a session for pickers.
type Info struct {
	SessionID string    `json:"sessionId"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	Turns     int       `json:"turns"`
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

// Store is the sessions folder.
type Store struct {
	dir string

	// mu guards summaries: List reads a log again only when its size or
	// modification time changed, so a long history lists quickly.
	mu        sync.Mutex
	summaries map[string]summary
}

type summary struct {
	size  int64
	mtime time.Time
	info  Info
}

// NewStore uses dir (created 0700 on first write).
func NewStore(dir string) *Store { return &Store{dir: dir, summaries: map[string]summary{}} }

func (s *Store) path(id string) (string, error) {
	if !validID(id) {
		return "", fmt.Errorf("%w: %q is not a session id", ErrNotFound, id)
	}
	return filepath.Join(s.dir, id+".jsonl"), nil
}

// Create starts a new session log and returns it open for appending.
func (s *Store) Create(title string) (Info, *Log, error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return Info{}, nil, err
	}
	now := time.Now().UTC()
	var rnd [3]byte
	_, _ = rand.Read(rnd[:])
	id := "s_" + now.Format("20060102T150405") + "_" + hex.EncodeToString(rnd[:])
	p, _ := s.path(id)
	log, err := openLog(p)
	if err != nil {
		return Info{}, nil, err
	}
	info := Info{SessionID: id, Title: title, CreatedAt: now, UpdatedAt: now}
	if err := log.Append(Record{Type: TypeSession, Time: now, SessionID: id, Title: title}); err != nil {
		log.Close()
		return Info{}, nil, err
	}
	return info, log, nil
}

// Open reads a session's records and opens its log for appending.
func (s *Store) Open(id string) ([]Record, *Log, error) {
	p, err := s.path(id)
	if err != nil {
		return nil, nil, err
	}
	recs, _, err := ReadRecords(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, nil, err
	}
	log, err := openLog(p)
	if err != nil {
		return nil, nil, err
	}
	return recs, log, nil
}

// Read returns a session's records without opening it for writing.
func (s *Store) Read(id string) ([]Record, error) {
	p, err := s.path(id)
	if err != nil {
		return nil, err
	}
	recs, _, err := ReadRecords(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return recs, err
}

// List returns every session, newest first.
func (s *Store) List() ([]Info, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		if info, ok := s.summarize(name); ok {
			out = append(out, info)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UpdatedAt.After(out[j].UpdatedAt) })
	return out, nil
}

// summarize returns a log's Info, from the cache while the file is unchanged.
func (s *Store) summarize(name string) (Info, bool) {
	path := filepath.Join(s.dir, name)
	st, err := os.Stat(path)
	if err != nil {
		return Info{}, false
	}
	s.mu.Lock()
	c, ok := s.summaries[name]
	s.mu.Unlock()
	if ok && c.size == st.Size() && c.mtime.Equal(st.ModTime()) {
		return c.info, true
	}
	recs, _, err := ReadRecords(path)
	if err != nil || len(recs) == 0 {
		return Info{}, false
	}
	info := Summarize(strings.TrimSuffix(name, ".jsonl"), recs)
	s.mu.Lock()
	s.summaries[name] = summary{size: st.Size(), mtime: st.ModTime(), info: info}
	s.mu.Unlock()
	return info, true
}

// Delete removes a session's log.
func (s *Store) Delete(id string) error {
	p, err := s.path(id)
	if err != nil {
		return err
	}
	if err := os.Remove(p); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	} else {
		return err
	}
}

// Summarize derives a session's Info from its records.
func Summarize(id string, recs []Record) Info {
	info := Info{SessionID: id}
	for _, r := range recs {
		switch r.Type {
		case TypeSession:
			info.Title, info.CreatedAt = r.Title, r.Time
		case TypeTitle:
			info.Title = r.Title
		case TypeTurn:
			info.Turns++
		}
		if r.Time.After(info.UpdatedAt) {
			info.UpdatedAt = r.Time
		}
	}
	return info
}
