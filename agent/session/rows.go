package session

import (
	"cmp"
	"slices"
	"strings"
)

// rowSet holds the rows in the order the journal gave them, with an index
// by id: a cold list of many sessions builds a small map, not a map of
// rows, and a journal written newest first needs no sort, nor even a copy
// (newestFirst hands out rows itself; see shared).
type rowSet struct {
	rows  []Info // "" ids are deleted rows
	pos   map[string]int32
	holes int
	// shared is set while rows is the slice a list handed out: callers
	// read it without the index's lock, so the next change copies rows
	// first (copy on write). A cold list of 10,000 rows so skips copying
	// 1.7 MB that a fresh process pays for in page faults and GC work.
	shared bool
}

func (r *rowSet) grow(n int) {
	r.rows = make([]Info, 0, n)
	r.pos = make(map[string]int32, n)
}

func (r *rowSet) len() int { return len(r.rows) - r.holes }

// get returns a row to read; edit, one to change.
func (r *rowSet) get(id string) *Info {
	if p, ok := r.pos[id]; ok {
		return &r.rows[p]
	}
	return nil
}

func (r *rowSet) edit(id string) *Info {
	if p, ok := r.pos[id]; ok {
		r.unshare()
		return &r.rows[p]
	}
	return nil
}

// unshare gives the set rows of its own before a change.
func (r *rowSet) unshare() {
	if r.shared {
		r.rows, r.shared = slices.Clone(r.rows), false
	}
}

func (r *rowSet) put(i Info) {
	if p := r.edit(i.SessionID); p != nil {
		*p = i
		return
	}
	r.add(i)
}

// add appends a row the set does not have.
func (r *rowSet) add(i Info) {
	r.unshare()
	if r.pos == nil {
		r.pos = map[string]int32{}
	}
	r.pos[i.SessionID] = int32(len(r.rows))
	r.rows = append(r.rows, i)
}

func (r *rowSet) del(id string) {
	if p, ok := r.pos[id]; ok {
		r.unshare()
		r.rows[p] = Info{}
		delete(r.pos, id)
		r.holes++
	}
}

func (r *rowSet) ids() []string {
	out := make([]string, 0, r.len())
	for _, i := range r.rows {
		if i.SessionID != "" {
			out = append(out, i.SessionID)
		}
	}
	return out
}

// newer orders rows newest first, then by id.
func newer(a, b *Info) int {
	if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
		return c
	}
	return strings.Compare(b.SessionID, a.SessionID)
}

// newestFirst returns the rows by when they changed, newest first. The
// slice may be the set's own (then shared until the next change): callers
// must not change it.
func (r *rowSet) newestFirst() []Info {
	sorted, last := true, -1
	for k := range r.rows {
		if r.rows[k].SessionID == "" {
			continue
		}
		if last >= 0 && newer(&r.rows[last], &r.rows[k]) > 0 {
			sorted = false
			break
		}
		last = k
	}
	if sorted && r.holes == 0 {
		r.shared = true
		return r.rows[:len(r.rows):len(r.rows)] // an append cannot reach the set's
	}
	if sorted {
		out := make([]Info, 0, r.len())
		for k := range r.rows {
			if r.rows[k].SessionID != "" {
				out = append(out, r.rows[k])
			}
		}
		return out
	}
	// Sort small keys, not the rows, and copy each row once, into its
	// place (10,000 rows are 1.7 MB: a copy to sort from was another).
	type key struct {
		t  int64
		id string
		k  int32
	}
	keys := make([]key, 0, r.len())
	for k := range r.rows {
		if i := &r.rows[k]; i.SessionID != "" {
			keys = append(keys, key{i.UpdatedAt.UnixNano(), i.SessionID, int32(k)})
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := cmp.Compare(b.t, a.t); c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	})
	out := make([]Info, len(keys))
	for n, k := range keys {
		out[n] = r.rows[k.k]
	}
	return out
}
