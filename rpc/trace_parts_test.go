package rpc_test

import (
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// What a question attaches from the person's buffers (a selection, an
// unsaved buffer as a resource, an image) is buffer text: README says the
// trace leaves it out, and history and turn/started leave it out already
// (PROTOCOL.md: `text` of a file, selection or resource and `data` of an
// image, with `bytes`). A selection of a .env line went into the trace in
// full, in a file people attach to bug reports. The question's own words
// stay, as for a string input.
func TestTraceLeavesAttachedBufferTextOut(t *testing.T) {
	e := newEnv(t)
	e.Write("main.go", "package main\n")
	e.Model.Script(modeltest.Reply{Text: []string{"ok"}}, modeltest.Reply{Text: []string{"ok"}})
	var trace lockedBuffer
	opts := e.Options()
	opts.Trace = &trace
	ed := rpctest.Start(t, opts)
	ed.Initialize(e.WS)
	var s rpc.SessionResult
	ed.MustCall("session/new", nil, &s)
	sid := s.Session.SessionID
	sel := &rpc.Range{Start: rpc.Position{Line: 0}, End: rpc.Position{Line: 0, Character: 30}}
	completed(ed, startParts(t, ed, sid,
		rpc.InputPart{Type: "text", Text: "what is wrong here? question-visible"},
		rpc.InputPart{Type: "selection", Path: ".env", Range: sel, Text: "API_TOKEN=canary-selected-secret"},
		rpc.InputPart{Type: "resource", URI: "untitled:Untitled-1", MimeType: "text/plain", Text: "canary-unsaved-buffer"},
	))
	completed(ed, start(t, ed, sid, "string-question-visible"))
	got := trace.String()
	if strings.Contains(got, "canary") {
		t.Errorf("attached buffer text in the trace:\n%s", got)
	}
	for _, want := range []string{"question-visible", "string-question-visible", `"type":"selection"`, "32 bytes"} {
		if !strings.Contains(got, want) {
			t.Errorf("the trace lacks %q:\n%s", want, got)
		}
	}
}
