package rpc

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kin-dev/kin/agent/session"
)

// session/list answers a page: 10,000 sessions cost the index's catch-up
// and one pass of cheap comparisons, and only the page's rows are built and
// encoded (encoding every row was most of the cost when it sent them all).

const (
	listDefault = 50
	listMax     = 1000
)

func handleSessionList(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p SessionListParams
	if len(params) > 0 && string(params) != "null" {
		if err := decode(params, &p); err != nil {
			return nil, err
		}
	}
	limit := p.Limit
	switch {
	case limit == 0:
		limit = listDefault
	case limit < 0 || limit > listMax:
		return nil, invalid("invalid params: limit must be between 1 and %d", listMax)
	}
	cwd := ""
	if p.Cwd != "" {
		if !filepath.IsAbs(p.Cwd) {
			return nil, invalid("invalid params: cwd %q is not an absolute path", p.Cwd)
		}
		cwd = filepath.Clean(p.Cwd)
		if real, err := filepath.EvalSymlinks(cwd); err == nil {
			cwd = real
		}
	}
	svc, _ := s.service()
	all, err := svc.ListSessions()
	if err != nil {
		return nil, err
	}
	start, ok := ListStart(all, p.Cursor)
	if !ok {
		return nil, invalid("invalid params: cursor %q is not one kin handed out", p.Cursor)
	}
	out := SessionListResult{Sessions: []SessionInfo{}}
	for i := start; i < len(all); i++ {
		in := &all[i]
		if !listed(in, p, cwd) {
			continue
		}
		if len(out.Sessions) == limit {
			last := &all[lastListed(all, i, p, cwd)]
			out.NextCursor = listCursor(last)
			break
		}
		if i&1023 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		out.Sessions = append(out.Sessions, sessionInfo(*in))
	}
	return out, nil
}

// listed reports whether a row belongs in the answer: the person's
// sessions, and subagents' only when asked for (all of them, or one
// session's); without an origin when interactive; in cwd when given.
func listed(in *session.Info, p SessionListParams, cwd string) bool {
	switch {
	case p.ParentID != "":
		if in.ParentID != p.ParentID {
			return false
		}
	case in.ParentID != "" && !p.IncludeSubagents:
		return false
	}
	if p.Interactive && in.Origin != "" {
		return false // a one-shot or piped kin chat's
	}
	return cwd == "" || in.Cwd == cwd
}

// lastListed is the index of the last listed row before i.
func lastListed(all []session.Info, i int, p SessionListParams, cwd string) int {
	for j := i - 1; j >= 0; j-- {
		if listed(&all[j], p, cwd) {
			return j
		}
	}
	return 0
}

// A cursor names the last row of a page by its place in the order (newest
// first: updatedAt, then sessionId, both descending), not by a count: a
// session made or deleted meanwhile neither repeats nor skips a row. A
// session that changed meanwhile moves to the top, where a list from the
// start finds it.
func listCursor(i *session.Info) string {
	if i.UpdatedAt.IsZero() {
		return "0." + i.SessionID // the oldest: before every time
	}
	return strconv.FormatInt(i.UpdatedAt.UnixNano(), 10) + "." + i.SessionID
}

// ListCursor is the cursor of the page after row i (kin acp's session/list
// hands out the same).
func ListCursor(i *session.Info) string { return listCursor(i) }

// ListStart is where the page after cursor starts in all (a session list,
// newest first); "" starts at the top, and ok is false for a cursor kin
// did not hand out.
func ListStart(all []session.Info, cursor string) (start int, ok bool) {
	if cursor == "" {
		return 0, true
	}
	at, id, ok := parseListCursor(cursor)
	if !ok {
		return 0, false
	}
	return sort.Search(len(all), func(i int) bool { return after(&all[i], at, id) }), true
}

func parseListCursor(c string) (time.Time, string, bool) {
	n, id, ok := strings.Cut(c, ".")
	if !ok || id == "" {
		return time.Time{}, "", false
	}
	ns, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		return time.Time{}, "", false
	}
	if ns == 0 {
		return time.Time{}, id, true
	}
	return time.Unix(0, ns), id, true
}

// after reports whether a row comes after the cursor's in the order.
func after(in *session.Info, at time.Time, id string) bool {
	if c := in.UpdatedAt.Compare(at); c != 0 {
		return c < 0
	}
	return in.SessionID < id
}
