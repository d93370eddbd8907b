package rpctest

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode/utf16"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/rpc"
)

// EditAnswer is how the fake editor answers kin's workspace/applyEdit.
type EditAnswer int

const (
	// ApplyEdits applies the edit to the buffer if its version matches,
	// reports it with a didChange, then answers applied (VS Code's order).
	ApplyEdits EditAnswer = iota
	// AnswerBeforeChange applies the edit but answers before it sends the
	// didChange that reports it.
	AnswerBeforeChange
	// RefuseEdits answers applied: false.
	RefuseEdits
	// NeverAnswer keeps the request and never answers it.
	NeverAnswer
)

// buffers are the fake editor's open documents, kept the way an editor
// keeps them (an implementation of its own, not kin's: positions are found
// through the text as UTF-16, lines end at "\n").
type buffers struct {
	answer EditAnswer
	docs   map[string]*buffer // by path
}

type buffer struct {
	uri     string
	version int64
	text    string
	saved   string // what the editor last read from or wrote to disk
}

// Capabilities is what an editor that keeps kin's overlay up to date
// declares in initialize; applyEdit says it also applies kin's edits.
func Capabilities(applyEdit bool) map[string]any {
	return map[string]any{"textDocuments": map[string]any{"sync": true, "applyEdit": applyEdit}}
}

// KeepBuffers makes the editor answer workspace/applyEdit the way answer
// says and reload its clean buffers on workspace/didChangeFiles, as the
// shims do. Call it before Initialize.
func (e *Editor) KeepBuffers(answer EditAnswer) {
	e.mu.Lock()
	e.docs = &buffers{answer: answer, docs: map[string]*buffer{}}
	e.mu.Unlock()
	e.OnRequest(rpc.MethodApplyEdit, e.applyEdit)
	e.OnNote(func(n Note) {
		if n.Method == rpc.NotifyDidChangeFiles {
			e.reload(n.Params)
		}
	})
}

// AnswerEdits changes how later workspace/applyEdit requests are answered.
func (e *Editor) AnswerEdits(answer EditAnswer) {
	e.mu.Lock()
	e.docs.answer = answer
	e.mu.Unlock()
}

// OpenBuffer opens path with text (unsaved when it differs from the
// file) and sends textDocument/didOpen.
func (e *Editor) OpenBuffer(path, text string) {
	e.t.Helper()
	if e.docs == nil {
		e.t.Fatal("rpctest: call KeepBuffers before OpenBuffer")
	}
	disk, _ := os.ReadFile(path)
	b := &buffer{uri: "file://" + path, version: 1, text: text, saved: string(disk)}
	e.mu.Lock()
	e.docs.docs[path] = b
	e.mu.Unlock()
	e.Notify(rpc.NotifyDidOpen, rpc.DidOpenTextDocumentParams{TextDocument: rpc.TextDocumentItem{URI: b.uri, LanguageID: "plaintext", Version: 1, Text: text}})
}

// Type replaces the text at r (UTF-16 positions) with text and sends the
// incremental textDocument/didChange.
func (e *Editor) Type(path string, r rpc.Range, text string) {
	e.t.Helper()
	e.change(path, []rpc.TextDocumentContentChangeEvent{{Range: &r, Text: text}})
}

// ReplaceBuffer replaces the whole buffer and sends a full didChange.
func (e *Editor) ReplaceBuffer(path, text string) {
	e.t.Helper()
	e.change(path, []rpc.TextDocumentContentChangeEvent{{Text: text}})
}

func (e *Editor) change(path string, changes []rpc.TextDocumentContentChangeEvent) {
	e.t.Helper()
	e.mu.Lock()
	b := e.docs.docs[path]
	if b == nil {
		e.mu.Unlock()
		e.t.Fatalf("%s is not open", path)
	}
	text, err := applyChanges(b.text, changes)
	if err != nil {
		e.mu.Unlock()
		e.t.Fatal(err)
	}
	b.text = text
	b.version++
	p := rpc.DidChangeTextDocumentParams{TextDocument: rpc.VersionedTextDocumentIdentifier{URI: b.uri, Version: b.version}, ContentChanges: changes}
	e.mu.Unlock()
	e.Notify(rpc.NotifyDidChange, p)
}

// Buffer returns the text and version of path's buffer.
func (e *Editor) Buffer(path string) (string, int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.docs.docs[path]
	if b == nil {
		return "", 0
	}
	return b.text, b.version
}

// SaveBuffer writes path's buffer to disk.
func (e *Editor) SaveBuffer(path string) {
	e.t.Helper()
	e.mu.Lock()
	b := e.docs.docs[path]
	text := b.text
	b.saved = text
	e.mu.Unlock()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// CloseBuffer closes path and sends textDocument/didClose.
func (e *Editor) CloseBuffer(path string) {
	e.mu.Lock()
	b := e.docs.docs[path]
	delete(e.docs.docs, path)
	e.mu.Unlock()
	e.Notify(rpc.NotifyDidClose, rpc.DidCloseTextDocumentParams{TextDocument: rpc.TextDocumentIdentifier{URI: b.uri}})
}

// applyEdit answers kin's workspace/applyEdit (in the read loop).
func (e *Editor) applyEdit(req *jsonrpc2.Request, reply func(any, error)) {
	var p rpc.ApplyWorkspaceEditParams
	if err := json.Unmarshal(*req.Params, &p); err != nil {
		reply(nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: err.Error()})
		return
	}
	e.mu.Lock()
	answer := e.docs.answer
	e.mu.Unlock()
	switch answer {
	case NeverAnswer:
		return
	case RefuseEdits:
		reply(rpc.ApplyWorkspaceEditResult{FailureReason: "the person is editing this file"}, nil)
		return
	}
	var notes []rpc.DidChangeTextDocumentParams
	e.mu.Lock()
	for _, dc := range p.Edit.DocumentChanges {
		var b *buffer
		for _, x := range e.docs.docs {
			if x.uri == dc.TextDocument.URI {
				b = x
			}
		}
		if b == nil || b.version != dc.TextDocument.Version {
			e.mu.Unlock()
			reply(rpc.ApplyWorkspaceEditResult{FailureReason: fmt.Sprintf("%s is not open at version %d", dc.TextDocument.URI, dc.TextDocument.Version)}, nil)
			return
		}
		// LSP: every edit's range is in the original text; apply the last
		// first, and report them in that order, each valid in the text
		// the one before left.
		edits := append([]rpc.TextEdit(nil), dc.Edits...)
		sort.Slice(edits, func(i, j int) bool { return less(edits[j].Range.Start, edits[i].Range.Start) })
		var changes []rpc.TextDocumentContentChangeEvent
		for _, te := range edits {
			r := te.Range
			changes = append(changes, rpc.TextDocumentContentChangeEvent{Range: &r, Text: te.NewText})
		}
		text, err := applyChanges(b.text, changes)
		if err != nil {
			e.mu.Unlock()
			reply(rpc.ApplyWorkspaceEditResult{FailureReason: err.Error()}, nil)
			return
		}
		b.text = text
		b.version++
		notes = append(notes, rpc.DidChangeTextDocumentParams{TextDocument: rpc.VersionedTextDocumentIdentifier{URI: b.uri, Version: b.version}, ContentChanges: changes})
	}
	e.mu.Unlock()
	if answer == AnswerBeforeChange {
		reply(rpc.ApplyWorkspaceEditResult{Applied: true}, nil)
	}
	for _, n := range notes {
		e.Notify(rpc.NotifyDidChange, n)
	}
	if answer == ApplyEdits {
		reply(rpc.ApplyWorkspaceEditResult{Applied: true}, nil)
	}
}

// reload reads the files kin changed into their clean buffers, as editors
// do (a buffer with unsaved changes is left alone).
func (e *Editor) reload(params json.RawMessage) {
	var p rpc.DidChangeFilesParams
	if json.Unmarshal(params, &p) != nil {
		return
	}
	for _, c := range p.Changes {
		e.mu.Lock()
		b := e.docs.docs[c.Path]
		if b == nil || b.text != b.saved {
			e.mu.Unlock()
			continue
		}
		data, err := os.ReadFile(c.Path)
		if err != nil {
			e.mu.Unlock()
			continue
		}
		b.text, b.saved = string(data), string(data)
		b.version++
		n := rpc.DidChangeTextDocumentParams{TextDocument: rpc.VersionedTextDocumentIdentifier{URI: b.uri, Version: b.version},
			ContentChanges: []rpc.TextDocumentContentChangeEvent{{Text: b.text}}}
		e.mu.Unlock()
		e.Notify(rpc.NotifyDidChange, n)
	}
}

func less(a, b rpc.Position) bool {
	return a.Line < b.Line || (a.Line == b.Line && a.Character < b.Character)
}

// applyChanges applies LSP content changes in order.
func applyChanges(text string, changes []rpc.TextDocumentContentChangeEvent) (string, error) {
	for _, c := range changes {
		if c.Range == nil {
			text = c.Text
			continue
		}
		start, err := byteOffset(text, c.Range.Start)
		if err != nil {
			return "", err
		}
		end, err := byteOffset(text, c.Range.End)
		if err != nil {
			return "", err
		}
		text = text[:start] + c.Text + text[end:]
	}
	return text, nil
}

// byteOffset finds a position by encoding its line as UTF-16.
func byteOffset(text string, p rpc.Position) (int, error) {
	lines := strings.SplitAfter(text, "\n")
	if p.Line >= len(lines) {
		return 0, fmt.Errorf("line %d is past the end (%d lines)", p.Line, len(lines))
	}
	off := 0
	for _, l := range lines[:p.Line] {
		off += len(l)
	}
	units := utf16.Encode([]rune(strings.TrimSuffix(lines[p.Line], "\n")))
	if p.Character < len(units) {
		units = units[:p.Character]
	}
	return off + len(string(utf16.Decode(units))), nil
}
