package agent

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/files"
	"github.com/kin-dev/kin/agent/tool"
)

// reviser keeps a file change's approval true while the person decides.
// The diff was made from the editor's buffer; when the person types into
// that buffer meanwhile, the card would show a change that can no longer
// be written. So while the approval waits, the reviser watches the buffers
// of the files the diff touches and, at each change, prepares the call again
// with the same arguments (edit_file applies the same replacements to the
// new text): the approval is replaced in place with the new diff, or, when
// the change no longer applies, with one that says so and whose Allow
// writes nothing. Each revision keeps its own action, so what runs is what
// the revision the person answered showed, and only that (an answer to an
// older one is refused by the broker).
type reviser struct {
	tl    tool.Tool
	env   tool.Env
	args  json.RawMessage
	w     files.Watcher
	paths []string // the real paths of the files the diff touches
	out   chan tool.Approval
	// note is added to every revision's warning (the person's hook
	// changed the call: the card must keep saying so).
	note string

	// mu guards revs.
	mu   sync.Mutex
	revs []revision // by revision: 0 is the approval first shown

	stop context.CancelFunc
	done chan struct{}
}

// newReviser returns the reviser of a prepared call, or nil when there is
// nothing to watch: no diff, or a front end without an editor's buffers.
func newReviser(tl tool.Tool, env tool.Env, args json.RawMessage, first *tool.Action) *reviser {
	if first.Approval == nil || len(first.Approval.Diffs) == 0 || env.Files == nil {
		return nil
	}
	w, ok := files.Find[files.Watcher](env.Files)
	if !ok {
		return nil
	}
	r := &reviser{tl: tl, env: env, args: args, w: w, out: make(chan tool.Approval), revs: []revision{{action: first}}}
	for _, d := range first.Approval.Diffs {
		r.paths = append(r.paths, boundary.RealPath(d.Path))
	}
	return r
}

// revisions is where the replaced approvals come (nil for no reviser).
func (r *reviser) revisions() <-chan tool.Approval {
	if r == nil {
		return nil
	}
	return r.out
}

// start watches from now on, until end; the gate asks the person now.
func (r *reviser) start(ctx context.Context) {
	if r == nil || r.done != nil {
		return
	}
	ctx, r.stop = context.WithCancel(ctx)
	r.done = make(chan struct{})
	go func() {
		defer close(r.done)
		r.watch(ctx)
	}()
}

// end stops watching and returns the action of the revision the person
// answered (nil for a revision it never sent, which the broker never
// accepts).
func (r *reviser) end(revision int) *tool.Action {
	if r.done != nil {
		r.stop()
		<-r.done
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if revision < 0 || revision >= len(r.revs) {
		return nil
	}
	return r.revs[revision].action
}

// revision is one approval shown, with what Allow runs.
type revision struct {
	action *tool.Action
	// stale: the change no longer applies; Allow writes nothing.
	stale bool
}

// buffers is what the editor has of the watched files: a path's text, or
// absent when it is not open.
type buffers map[string]string

func (r *reviser) now() buffers {
	b := buffers{}
	for _, p := range r.paths {
		if text, ok := r.env.Files.Buffer(p); ok {
			b[p] = string(text)
		}
	}
	return b
}

func (r *reviser) watch(ctx context.Context) {
	r.mu.Lock()
	cur := r.revs[0]
	r.mu.Unlock()
	// What the first diff was made from: the open buffers' texts as its
	// old text (a buffer typed into before the watch began differs).
	seen := buffers{}
	now := r.now()
	for i, d := range cur.action.Approval.Diffs {
		if _, open := now[r.paths[i]]; open {
			seen[r.paths[i]] = d.OldText
		}
	}
	for {
		changed := r.w.Changed()
		if now := r.now(); !reflect.DeepEqual(now, seen) {
			seen = now
			next := r.prepare(ctx)
			if ctx.Err() != nil {
				return
			}
			if reflect.DeepEqual(next.action.Approval, cur.action.Approval) {
				continue
			}
			select {
			case r.out <- *next.action.Approval:
			case <-ctx.Done():
				return
			}
			r.mu.Lock()
			r.revs = append(r.revs, next)
			r.mu.Unlock()
			cur = next
			continue
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// prepare prepares the call again. When it cannot be (the text the change
// was made for is gone) or would change nothing now, the approval is the
// last one that applied, with a warning that says so, and Allow writes
// nothing.
func (r *reviser) prepare(ctx context.Context) revision {
	a, err := r.tl.Prepare(ctx, r.env, r.args)
	if err == nil && a.Approval != nil {
		if r.note != "" {
			a.Approval = withNote(a.Approval, r.note)
		}
		return revision{action: a}
	}
	var why string
	run := func(context.Context, func(string)) tool.Result {
		return tool.Failed("not written: " + why + " The file changed in the editor while the person was deciding; read it again before another change.")
	}
	if err != nil {
		why = strings.TrimSuffix(err.Error(), ".") + "."
	} else {
		why = "the file already holds this change; nothing to write."
		run = a.Run
	}
	ap := r.lastApplying()
	ap.Title += " (no longer applies)"
	ap.Warning = strings.TrimSpace(ap.Warning + " The file changed while you were deciding, and this change no longer applies: " + why + " Allow writes nothing.")
	return revision{action: &tool.Action{Approval: &ap, Run: run}, stale: true}
}

// lastApplying is the approval of the last revision whose change applied:
// what the model proposed, as last shown.
func (r *reviser) lastApplying() tool.Approval {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.revs) - 1; i > 0; i-- {
		if !r.revs[i].stale {
			return *r.revs[i].action.Approval
		}
	}
	return *r.revs[0].action.Approval
}
