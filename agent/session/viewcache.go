package session

import (
	"os"
	"sync"
	"time"
)

// A session resumed again in the same kin (an editor reopening it, a second
// editor window) would read its whole log again for the same page. The
// Store keeps the last pages read, each with the log's identity, size and
// modification time when it was read; any append changes the size, so a
// page is used again only while the log is exactly as it was.

// viewCacheSize bounds the pages kept (each holds one page of history).
const viewCacheSize = 8

type viewKey struct {
	id string
	q  Query
}

type cachedView struct {
	v     *View
	fi    os.FileInfo
	size  int64
	mtime time.Time
}

type viewCache struct {
	mu sync.Mutex
	m  map[viewKey]cachedView
}

// Remember keeps v, read for q, as the page of id's log as it is now. Call
// it only with a View nobody changes any more (Add), and only when the log
// holds everything v shows.
func (s *Store) Remember(id string, q Query, v *View) {
	p, err := s.path(id)
	if err != nil {
		return
	}
	fi, err := os.Stat(p)
	if err != nil {
		return
	}
	s.views.mu.Lock()
	defer s.views.mu.Unlock()
	if s.views.m == nil || len(s.views.m) >= viewCacheSize {
		s.views.m = map[viewKey]cachedView{}
	}
	s.views.m[viewKey{id, q}] = cachedView{v: v, fi: fi, size: fi.Size(), mtime: fi.ModTime()}
}

// CachedView is View, answered from the page last read for the same query
// while the log has not changed since. The View returned may be shared: it
// is only read.
func (s *Store) CachedView(id string, q Query) (*View, error) {
	p, err := s.path(id)
	if err != nil {
		return nil, err
	}
	key := viewKey{id, q}
	if fi, err := os.Stat(p); err == nil {
		s.views.mu.Lock()
		c, ok := s.views.m[key]
		s.views.mu.Unlock()
		if ok && os.SameFile(c.fi, fi) && c.size == fi.Size() && c.mtime.Equal(fi.ModTime()) {
			return c.v, nil
		}
	}
	v, err := s.View(id, q)
	if err != nil {
		return nil, err
	}
	s.Remember(id, q, v)
	return v, nil
}
