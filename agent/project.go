package agent

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/kin-dev/kin/agent/instructions"
	"github.com/kin-dev/kin/agent/session"
)

// refreshInstructions looks at the instructions files in force (the
// roots', the person's, those of directories the turn touched so far and
// of paths) and builds the request's instructions from them. When what is
// in force differs from the session's latest instructions record, a new
// record says what changed: the model is told in the conversation, the
// editor by a notice and the history item. Files are read again only when
// their size or time changed.
func (t *turn) refreshInstructions(paths []string) {
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
	files := t.svc.loader.Load(t.svc.opts.Home, roots, seen)
	t.instructions = requestInstructions(t.svc.opts.Instructions, roots, files)
	now := recorded(files)
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
