package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/hooks"
	"github.com/kin-dev/kin/agent/instructions"
	"github.com/kin-dev/kin/agent/ledger"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/skills"
	"github.com/kin-dev/kin/agent/tool"
)

// This file is the project's side of the one trust ledger (package
// ledger): what a session's folders bring that runs or steers kin (their
// skills, hooks and instruction files) is shown to the person once and
// used only after they trusted it, by its digest. The rules:
//
//   - A repository's skill or hook that is new or changed is asked about
//     (one project_trust request listing every such item) before the
//     turn's question goes to the model, and, when it changed during a
//     turn, again before it runs (a hook) or loads (a skill). Until then
//     it does not run, and the skill is not listed to the model.
//   - A repository's instruction files are asked about the first time a
//     session of the project brings one; until the person trusts them they
//     are withheld from the model. Once the project's instructions are
//     trusted, a changed or new instruction file of it is read and named in
//     the instructions notice (it is the project's own text, which the
//     sandbox keeps read-only to commands at the top of each folder), and
//     the ledger keeps its digest.
//   - "Not now" is remembered for the session's set of items: the person
//     is not asked again until something else changes.
//   - The person's own skills ($KIN_HOME/skills, ~/.agents/skills) and
//     hooks ($KIN_HOME/settings.json) and $KIN_HOME/AGENTS.md are theirs:
//     never asked about.

// pending is one item of a folder and what the ledger says of it.
type pending struct {
	item  ledger.Item
	state ledger.State
	shown permission.TrustItem
}

// brought is what a session's folders bring now.
type brought struct {
	skills skills.Found
	hooks  hooks.Config
	// items are the repository's skills, hooks and instruction files, with
	// what the ledger says of each.
	items []pending
}

// userHome is the person's home folder, whose ~/.agents/skills are theirs.
func (s *Service) userHome() string { return s.home }

// brought looks at what the roots bring: every skill, every hook, and the
// repository's items with their ledger state. instr are the instruction
// files Load found (before trust).
func (s *Service) brought(roots []string, instr []instructions.File) brought {
	b := brought{
		skills: skills.Discover(skills.Places(s.opts.Home, s.userHome(), roots)),
		hooks:  hooks.Load(s.opts.Home, roots),
	}
	var items []ledger.Item
	var shown []permission.TrustItem
	for _, sk := range b.skills.Skills {
		if sk.Personal() {
			continue
		}
		items = append(items, ledger.Item{Kind: ledger.KindSkill, Project: sk.Project, Path: sk.Dir, Name: sk.Name, Digest: sk.Digest, Display: sk.Description})
		shown = append(shown, permission.TrustItem{Kind: string(ledger.KindSkill), Path: displayIn(roots, sk.Dir), Name: sk.Name,
			Digest: sk.Digest, Detail: skills.Clip(sk.Description, 200)})
	}
	for _, h := range b.hooks.Hooks {
		if !h.RunsProjectContent() {
			continue
		}
		it := hookItem(h)
		it.Display = h.Detail()
		items = append(items, it)
		shown = append(shown, permission.TrustItem{Kind: string(ledger.KindHook), Path: displayIn(roots, h.File) + " " + h.Where,
			Name: string(h.Event) + matcherSuffix(h.Matcher), Digest: h.Digest, Detail: it.Display})
	}
	for _, f := range instr {
		if f.Scope == instructions.Home {
			continue
		}
		it := instructionItem(roots, f)
		items = append(items, it)
		shown = append(shown, permission.TrustItem{Kind: string(ledger.KindInstructions), Path: displayIn(roots, f.Path), Digest: it.Digest,
			Detail: fmt.Sprintf("%d bytes", f.Bytes)})
	}
	states := s.ledger.Statuses(items)
	projects := s.ledger.Projects(ledger.KindInstructions)
	for i := range items {
		if items[i].Kind == ledger.KindInstructions && states[i] == ledger.StateNew && projects[items[i].Project] {
			// a new file of a project whose instructions the person
			// trusted: in force, named in the instructions notice
			states[i] = ledger.StateChanged
		}
		shown[i].Changed = states[i] == ledger.StateChanged
		b.items = append(b.items, pending{item: items[i], state: states[i], shown: shown[i]})
	}
	return b
}

func matcherSuffix(m string) string {
	if m == "" {
		return ""
	}
	return " " + m
}

// hookItem is a project hook's ledger item, its Display left to the
// caller: a status check needs only its digest, and a person's hook bound
// to the project reads the project's files again for its Detail.
func hookItem(h hooks.Hook) ledger.Item {
	return ledger.Item{Kind: ledger.KindHook, Project: h.Project, Path: h.File + "#" + h.Where, Name: string(h.Event) + matcherSuffix(h.Matcher),
		Digest: h.Current()}
}

// instructionItem is a repository instruction file's ledger item.
func instructionItem(roots []string, f instructions.File) ledger.Item {
	real := boundary.RealPath(f.Path)
	return ledger.Item{Kind: ledger.KindInstructions, Project: projectOf(roots, real), Path: real, Digest: "sha256:" + f.Hash}
}

// projectOf is the real root holding p ("" when none does).
func projectOf(roots []string, p string) string {
	for _, r := range roots {
		if real := boundary.RealPath(r); boundary.Within(real, p) {
			return real
		}
	}
	return ""
}

// displayIn shows p relative to the first root when inside it.
func displayIn(roots []string, p string) string {
	if len(roots) > 0 {
		root := boundary.RealPath(roots[0])
		if rel, err := filepath.Rel(root, boundary.RealPath(p)); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return p
}

// untrusted are the items to ask about: new or changed skills and hooks,
// new instruction files (a changed one of a trusted path is read again
// and named in the instructions notice).
func (b brought) untrusted() []pending {
	var out []pending
	for _, p := range b.items {
		switch {
		case p.state == ledger.StateTrusted:
		case p.item.Kind == ledger.KindInstructions && p.state == ledger.StateChanged:
		default:
			out = append(out, p)
		}
	}
	return out
}

// trusts reports whether the ledger lets the item run or steer kin now:
// trusted with this digest (an instruction file: trusted at all).
func (b brought) trusts(it ledger.Item) bool {
	for _, p := range b.items {
		if p.item.ID() == it.ID() {
			if p.item.Kind == ledger.KindInstructions {
				return p.state != ledger.StateNew
			}
			return p.state == ledger.StateTrusted && p.item.Digest == it.Digest
		}
	}
	return false
}

// trustProject asks the person about what the session's folders bring
// that is not trusted, before the turn's question goes anywhere. It
// returns what is in force afterwards.
func (t *turn) trustProject(ctx context.Context) brought {
	roots := t.sess.sessionRoots()
	set := t.svc.loader.Load(t.svc.opts.Home, roots, t.sess.instructionDirs())
	b := t.svc.brought(roots, set.Files)
	t.reportProblems(b)
	// changed instruction files of trusted paths: the ledger keeps their
	// new digests (the instructions notice names them)
	var moved []ledger.Item
	for _, p := range b.items {
		if p.item.Kind == ledger.KindInstructions && p.state == ledger.StateChanged {
			moved = append(moved, p.item)
		}
	}
	if len(moved) > 0 {
		if err := t.svc.ledger.Trust(moved...); err != nil {
			t.trustWarning(err)
		}
	}
	ask := b.untrusted()
	if len(ask) == 0 {
		return t.svc.brought(roots, set.Files)
	}
	if t.sess.allDeclined(ask) {
		return b
	}
	if t.askTrust(ctx, ask, "This folder brings skills, hooks or instructions from the repository. kin uses none of them until you trust them: hooks run as commands (confined like commands), skills and instructions steer the model.") {
		return t.svc.brought(roots, set.Files)
	}
	t.sess.decline(ask)
	return b
}

// askTrust puts items to the person as one project_trust request and
// records the answer (in the ledger when trusted, in the session's log
// either way). It reports whether they were trusted.
func (t *turn) askTrust(ctx context.Context, items []pending, why string) bool {
	gate := t.svc.opts.Gate
	if gate == nil {
		return false
	}
	req := permission.Request{SessionID: t.sess.id, TurnID: t.id, Kind: permission.KindProjectTrust,
		Approval: permissionTitle(items, why)}
	for _, p := range items {
		req.Items = append(req.Items, p.shown)
	}
	out := gate.Ask(ctx, req)
	t.record(session.Record{Type: session.TypeDecision, RequestID: out.RequestID, ApprovalKind: req.Kind,
		Decision: out.Decision, Reason: out.Reason, Title: req.Title})
	if out.Decision != permission.Trust {
		return false
	}
	var all []ledger.Item
	for _, p := range items {
		all = append(all, p.item)
	}
	if err := t.svc.ledger.Trust(all...); err != nil {
		t.trustWarning(err)
		return false
	}
	return true
}

func permissionTitle(items []pending, why string) tool.Approval {
	changed := 0
	for _, p := range items {
		if p.state == ledger.StateChanged {
			changed++
		}
	}
	title := fmt.Sprintf("Trust %d item(s) this folder brings?", len(items))
	if changed == len(items) {
		title = fmt.Sprintf("%d item(s) changed since you trusted them: trust them again?", len(items))
	}
	return tool.Approval{Title: title, Warning: why}
}

// decline remembers items the person said "not now" to, by content.
func (sess *Session) decline(items []pending) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.declined == nil {
		sess.declined = map[string]bool{}
	}
	for _, p := range items {
		sess.declined[p.item.ID()+"="+p.item.Digest] = true
	}
}

// allDeclined reports whether the person said "not now" to every item,
// with its content, in this session.
func (sess *Session) allDeclined(items []pending) bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	for _, p := range items {
		if !sess.declined[p.item.ID()+"="+p.item.Digest] {
			return false
		}
	}
	return true
}

func (t *turn) trustWarning(err error) {
	t.events().Notice(Notice{Level: "warning", Source: "trust", SessionID: t.sess.id, Message: "kin could not save what you trusted: " + err.Error()})
}

// reportProblems tells the person once per session about skills and hook
// files kin could not read, and name clashes of skills.
func (t *turn) reportProblems(b brought) {
	var lines []string
	lines = append(lines, b.skills.Problems...)
	lines = append(lines, b.hooks.Problems...)
	used := map[string]string{}
	for _, sk := range b.usable() {
		used[sk.Name] = sk.Dir
	}
	for _, c := range b.skills.Clashes {
		in, others := c.Winner, c.Shadows
		if d, ok := used[c.Name]; ok && d != c.Winner {
			// the person's own, while the repository's is not trusted
			in, others = d, nil
			for _, o := range append([]string{c.Winner}, c.Shadows...) {
				if o != d {
					others = append(others, o)
				}
			}
		}
		lines = append(lines, fmt.Sprintf("skill %s: %s is used; also found in %s", c.Name, in, strings.Join(others, ", ")))
	}
	t.sayOnce(&t.sess.extSaid, strings.Join(lines, "\n"), Notice{Level: "warning", Source: "skills", SessionID: t.sess.id, Message: strings.Join(lines, "; ")})
}

// inForce filters a Load's files to those the ledger lets steer the model:
// the person's own, and the repository's trusted ones; withheld are the
// paths left out.
func (s *Service) inForce(roots []string, set instructions.Set) (instructions.Set, []string) {
	var items []ledger.Item
	var idx []int
	for i, f := range set.Files {
		if f.Scope != instructions.Home {
			items = append(items, instructionItem(roots, f))
			idx = append(idx, i)
		}
	}
	states := s.ledger.Statuses(items)
	projects := s.ledger.Projects(ledger.KindInstructions)
	drop := map[int]bool{}
	var withheld []string
	for j, st := range states {
		if st == ledger.StateNew && !projects[items[j].Project] {
			drop[idx[j]] = true
			withheld = append(withheld, displayIn(roots, set.Files[idx[j]].Path))
		}
	}
	if len(drop) == 0 {
		return set, nil
	}
	out := instructions.Set{Left: set.Left}
	for i, f := range set.Files {
		if !drop[i] {
			out.Files = append(out.Files, f)
		}
	}
	return out, withheld
}
