package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kin-dev/kin/agent/instructions"
	"github.com/kin-dev/kin/agent/ledger"
	"github.com/kin-dev/kin/agent/session"
)

// refreshInstructions looks at the instructions files in force (the
// roots', the person's, those of directories the turn touched so far and
// of paths) and builds the request's instructions from them. When what is
// in force differs from the session's latest instructions record, a new
// record says what changed: the model is told in the conversation, the
// editor by a notice and the history item. Files are read again only when
// their size or time changed.
func (t *turn) refreshInstructions(ctx context.Context, paths []string) {
	roots := t.sess.sessionRoots()
	dirs := t.sess.instructionDirs()
	seen := slices.Clone(dirs)
	for _, p := range paths {
		for _, d := range instructions.Dirs(roots, p) {
			if !slices.Contains(seen, d) {
				seen = append(seen, d)
			}
		}
	}
	loaded := t.svc.loader.Load(t.svc.opts.Home, roots, seen)
	set, withheld := t.svc.inForce(roots, loaded)
	if len(withheld) > 0 && t.trustInstructions(ctx, roots, loaded) {
		set, withheld = t.svc.inForce(roots, loaded)
	}
	t.withheld(withheld)
	t.instructions = requestInstructions(t.svc.opts.Instructions, roots, set) + t.skillsSection()
	t.leftOut(set.Left)
	now := recorded(set.Files)
	// Directories stay in force for the session while they hold a file.
	t.sess.mu.Lock()
	t.sess.dirs = dirsOf(now, roots)
	t.sess.mu.Unlock()

	before, known := t.sess.recordedInstructions()
	changed := changedFiles(before, now, roots)
	if known && len(changed) == 0 {
		return
	}
	if !known {
		changed = nil // a session from before kin kept them: this is where it starts
	}
	if _, ok := t.record(session.Record{Type: session.TypeInstructions, Files: now, Changed: changed}); !ok || len(changed) == 0 {
		return
	}
	t.events().Notice(Notice{Level: "info", Source: "instructions", SessionID: t.sess.id,
		Message: "The project's instructions changed (" + strings.Join(changed, ", ") + "); kin read them again and told the model."})
}

// recordedInstructions are the files of the session's latest instructions
// record, and whether it has one.
func (sess *Session) recordedInstructions() ([]session.InstructionFile, bool) {
	sess.wmu.Lock()
	defer sess.wmu.Unlock()
	if sess.conv == nil || sess.conv.instr == nil {
		return nil, false
	}
	return sess.conv.instr, true
}

// changedFiles lists what differs between two sets of files in force: a
// path (relative to the first root when inside it) for a file new or
// edited, "-path" for one no longer in force.
func changedFiles(before, now []session.InstructionFile, roots []string) []string {
	show := func(p string) string {
		if len(roots) > 0 {
			if rel, err := filepath.Rel(roots[0], p); err == nil && !strings.HasPrefix(rel, "..") {
				return filepath.ToSlash(rel)
			}
		}
		return p
	}
	old := map[string]string{}
	for _, f := range before {
		old[f.Path] = f.Hash
	}
	var out []string
	for _, f := range now {
		if h, ok := old[f.Path]; !ok || h != f.Hash {
			out = append(out, show(f.Path))
		}
		delete(old, f.Path)
	}
	for _, f := range before {
		if _, gone := old[f.Path]; gone {
			out = append(out, "-"+show(f.Path))
		}
	}
	return out
}

// leftOut tells the person, once per change, which instructions files are
// left out of the requests to keep within instructions.MaxTotal (the model
// is told in the instructions themselves).
func (t *turn) leftOut(left []instructions.Left) {
	var paths []string
	for _, l := range left {
		paths = append(paths, l.Path)
	}
	t.sayOnce(&t.sess.leftInstr, strings.Join(paths, "\x00"), Notice{Level: "warning", Source: "instructions", SessionID: t.sess.id,
		Message: fmt.Sprintf("The project's instructions files are over %d KiB together; kin left these out of the requests (the model is told they exist): %s", instructions.MaxTotal>>10, strings.Join(paths, ", "))})
}

// withheld tells the person, once per change, which of the repository's
// instruction files are kept from the model until they trust them.
func (t *turn) withheld(paths []string) {
	t.sayOnce(&t.sess.withheldSaid, strings.Join(paths, "\x00"), Notice{Level: "warning", Source: "trust", SessionID: t.sess.id,
		Message: "These instruction files of the repository are not trusted, so the model does not see them: " + strings.Join(paths, ", ") + ". kin asks when your next question starts (or /trust lists what you trusted)."})
}

// trustInstructions asks the person, during a turn, about the
// repository's instruction files it found that are not trusted (a project
// whose instructions the person has not trusted yet: the question comes
// before the next request, so nothing of them steers the model first). It
// reports whether they were trusted; "not now" is not asked again in the
// session.
func (t *turn) trustInstructions(ctx context.Context, roots []string, set instructions.Set) bool {
	var ask []pending
	for _, p := range t.svc.brought(roots, set.Files).untrusted() {
		if p.item.Kind == ledger.KindInstructions {
			ask = append(ask, p)
		}
	}
	if len(ask) == 0 || t.sess.allDeclined(ask) {
		return false
	}
	if t.askTrust(ctx, ask, "The model is working in folders whose instruction files (AGENTS.md, CLAUDE.md) come from the repository. kin sends them to the model only once you trust them.") {
		return true
	}
	t.sess.decline(ask)
	return false
}

// sayOnce sends n unless *last (guarded by the session's mu) already is
// key, and keeps key: a notice per change of what it says, not per turn.
// An empty key says nothing.
func (t *turn) sayOnce(last *string, key string, n Notice) {
	t.sess.mu.Lock()
	same := *last == key
	*last = key
	t.sess.mu.Unlock()
	if !same && key != "" {
		t.events().Notice(n)
	}
}
