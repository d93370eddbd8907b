package manager

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/mcp/calltool"
	"github.com/kin-dev/kin/mcp/catalog"
	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/connect"
	"github.com/kin-dev/kin/mcp/trust"
)

// events are what an install found worth telling the person.
type events struct {
	redefined []catalog.Def     // changed since this connection's approval
	current   []catalog.Def     // the others: checked against the standing grants
	added     []string          // server tool names (late tools only)
	skipped   []string          // not in allowed_tools, first report
	omitted   []catalog.Omitted // left out (not an object schema), first report
	removed   []string
	// unasked are the read-only tools that now run without asking, when
	// the person has not been told yet (trusted before kin saw the
	// tools); notListed those declared read-only that the grant does not
	// list (each call asks).
	unasked, notListed []string
	launch             trust.Launch      // the launch whose grant keeps them
	readOnly           map[string]string // unasked with their fingerprints
}

// install vets a listing and replaces the tool set. initial marks the first
// listing after the launch was approved: only its read-only tools may be
// auto-allowed. Call with s.mu held.
func (s *server) install(raws []catalog.Raw, initial bool) events {
	var allowed catalog.Allowed
	if s.cfg.AllowedToolsSet {
		allowed = append(catalog.Allowed{}, s.cfg.AllowedTools...)
	}
	// Redacted with one redactor: it reads the sign-in's tokens.
	defs, skipped, omitted := catalog.Vet(s.cfg.Name, raws, allowed, s.m.names, s.redactor().String)
	var ev events
	for _, name := range skipped {
		if !s.skipped[name] {
			s.skipped[name] = true
			ev.skipped = append(ev.skipped, name)
		}
	}
	for _, o := range omitted {
		if s.reported[o.Name] != o.Reason {
			s.reported[o.Name] = o.Reason
			ev.omitted = append(ev.omitted, o)
		}
	}
	s.omitted = omitted
	ch := catalog.Compare(s.defs, defs)
	ev.removed = ch.Removed
	for _, d := range defs {
		fp, seen := s.known[d.Name]
		switch {
		case !seen && !initial:
			ev.added = append(ev.added, d.Name)
		case seen && fp != d.Fingerprint:
			s.revoked[d.Name] = true
			ev.redefined = append(ev.redefined, d)
		default:
			ev.current = append(ev.current, d)
		}
		s.known[d.Name] = d.Fingerprint
	}
	if initial {
		s.initialRO = map[string]string{}
		for _, d := range defs {
			if d.ReadOnly && !s.revoked[d.Name] {
				s.initialRO[d.Name] = d.Fingerprint
			}
		}
		s.m.sawReadOnly(s.launch, s.initialRO)
		if s.trusted && s.allowed == nil && s.cfg.Scope != config.ScopeClient {
			// trusted before kin saw the tools: these are the ones the
			// grant now lets run unasked, kept with it and listed to the
			// person (recordReadOnly, after the lock)
			s.allowed = s.initialRO
			ev.unasked, ev.launch, ev.readOnly = slices.Sorted(maps.Keys(s.initialRO)), s.launch, maps.Clone(s.initialRO)
		}
		for name, fp := range s.initialRO {
			if s.trusted && s.allowed[name] != fp {
				ev.notListed = append(ev.notListed, name)
			}
		}
		sort.Strings(ev.notListed)
	}
	tools := make([]*calltool.Tool, 0, len(defs))
	for _, d := range defs {
		// Read-only tools run without asking only for a server the person
		// trusted (never one allowed once), only those its grant lists (or
		// the launch approval listed), and only while their definition is
		// the one of the initial list. A server an ACP client passed for a
		// session was chosen by the client, not in kin's configuration:
		// every call of it asks, a read-only hint allows nothing there.
		auto := s.trusted && !s.revoked[d.Name] && d.ReadOnly && s.initialRO[d.Name] == d.Fingerprint &&
			s.allowed[d.Name] == d.Fingerprint && s.cfg.Scope != config.ScopeClient
		tools = append(tools, calltool.New(s, d, auto))
	}
	keep := map[string]bool{}
	for _, d := range defs {
		keep[d.Name] = true
	}
	s.m.names.Release(s.cfg.Name, keep)
	// A turn may still hold the tools this listing replaces: those whose
	// definition no longer runs unasked stop doing so (see Tool.Revoke).
	unasked := map[string]string{}
	for _, t := range tools {
		if t.ReadOnly() {
			unasked[t.Def().Name] = t.Def().Fingerprint
		}
	}
	for _, t := range s.tools {
		if unasked[t.Def().Name] != t.Def().Fingerprint {
			t.Revoke()
		}
	}
	s.defs, s.tools = defs, tools
	return ev
}

// report tells the Host what install found. Call without locks.
//
// A tool redefined while this connection lives loses every standing grant.
// A standing grant given for another definition of a tool (a permanent
// grant from before a restart, when `npx -y pkg` fetched a new version, or
// one given through another kin process) is revoked too, with the same
// warning: the person approved something else.
func (s *server) report(ev events) {
	name := s.disp.Name
	var redefined []string
	for _, d := range ev.redefined {
		s.m.host.RevokeGrant(calltool.GrantKey(s.id, d.Name), "")
		redefined = append(redefined, d.Exposed)
	}
	for _, d := range ev.current {
		if s.m.host.RevokeGrant(calltool.GrantKey(s.id, d.Name), d.Fingerprint) {
			redefined = append(redefined, d.Exposed)
		}
	}
	if len(redefined) > 0 {
		sort.Strings(redefined)
		s.m.host.Notice(LevelWarning, fmt.Sprintf(
			"⚠ MCP server %s redefined %s after approval (description, schema or annotations changed): any standing grant is revoked and each call needs fresh approval",
			name, strings.Join(redefined, ", ")))
	}
	if len(ev.unasked) > 0 {
		if _, err := s.m.trust.RecordReadOnly(ev.launch, ev.readOnly); err != nil {
			s.m.log.Warn("mcp trust: read-only tools not recorded", zap.String("server", s.cfg.Name), zap.Error(err))
		}
		s.m.host.Notice(LevelInfo, fmt.Sprintf("MCP server %s is trusted: its tools %s declare themselves read-only and run without asking (each other call asks; revoke with kin grants revoke trust:%s)",
			name, strings.Join(labels(ev.unasked), ", "), s.cfg.Name))
	}
	if len(ev.notListed) > 0 {
		s.m.host.Notice(LevelWarning, fmt.Sprintf("MCP server %s declares %s read-only, but they were not listed when you trusted it: each call asks",
			name, strings.Join(labels(ev.notListed), ", ")))
	}
	if len(ev.added) > 0 {
		s.m.host.Notice(LevelInfo, fmt.Sprintf("MCP server %s added tools %s; each call needs approval",
			name, strings.Join(labels(ev.added), ", ")))
	}
	if len(ev.skipped) > 0 {
		s.m.host.Notice(LevelWarning, fmt.Sprintf("MCP server %s: tools not in allowed_tools were skipped: %s",
			name, strings.Join(labels(ev.skipped), ", ")))
	}
	for _, o := range ev.omitted {
		s.m.host.Notice(LevelWarning, omittedWarning(name, o))
	}
}

// omittedWarning says which tool was left out and why (mcp/list's warnings
// and a notice).
func omittedWarning(server string, o catalog.Omitted) string {
	return fmt.Sprintf("MCP server %s: tool %s is left out (the server's other tools are available): %s",
		server, catalog.Label(o.Name), o.Reason)
}

func labels(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = catalog.Label(n)
	}
	sort.Strings(out)
	return out
}

// request marks a list change pending on ch (capacity 1): a change
// notice; requests coalesce.
func request(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// refreshLoop runs fetch after each change notice pending on ch (the tool
// list's, the prompt list's), for as long as conn lives. Notifications
// never install anything themselves: fetch lists again and vets.
//
// A server may announce changes as fast as it can write them (a loop of
// list_changed, each list different): every fetch that finds a change
// tells the person in a notice and changes the tools the model is sent,
// so fetches are at least RefreshGap apart. The announcements meanwhile
// coalesce (ch holds one), and the last one is fetched after the gap, so
// the list kin keeps is the server's latest.
func (s *server) refreshLoop(conn *connect.Conn, ch <-chan struct{}, fetch func(*connect.Conn)) {
	for {
		select {
		case <-conn.Done():
			return
		case <-ch:
			fetch(conn)
		}
		t := time.NewTimer(RefreshGap)
		select {
		case <-conn.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// RefreshGap is the least time between two fetches of a server's tool (or
// prompt) list after it announced changes.
const RefreshGap = time.Second

func (s *server) refetch(conn *connect.Conn) {
	s.mu.Lock()
	life := s.life
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(life, s.m.opts.ConnectTimeout)
	defer cancel()
	raws, err := catalog.List(ctx, conn.Session, s.m.limits)
	s.mu.Lock()
	if s.conn != conn || s.stopped {
		s.mu.Unlock()
		return
	}
	var le *catalog.LimitError
	if err != nil && errors.As(err, &le) {
		hadPrompts := s.detach()
		s.mu.Unlock()
		conn.Close()
		s.fail(StateUnavailable, "after a tool list change: "+le.Error())
		if hadPrompts {
			s.m.promptsChanged()
		}
		return
	}
	if err != nil {
		s.mu.Unlock()
		s.m.host.Notice(LevelWarning, fmt.Sprintf("MCP server %s: the changed tool list could not be fetched; keeping the previous one: %s",
			s.disp.Name, s.redactErr(err)))
		return
	}
	ev := s.install(raws, false)
	s.mu.Unlock()
	s.report(ev)
	s.set(StateConnected, "")
}
