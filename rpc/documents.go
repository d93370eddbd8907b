package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/sourcegraph/jsonrpc2"
	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/files"
)

// documentNotifications are the editor's buffer notifications. They run
// inline in the read loop, in the order the editor sent them, which is
// what keeps the overlay in step; they only touch memory.
var documentNotifications = map[string]func(s *Server, params json.RawMessage){
	NotifyDidOpen:   didOpen,
	NotifyDidChange: didChange,
	NotifyDidClose:  didClose,
}

// documents returns the overlay when the editor declared that it syncs
// its buffers and the connection is initialized; nil means the
// notification is ignored.
func (s *Server) documents(method string) *files.Overlay {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateInitialized || !s.docCaps.Sync {
		s.log.Debug("ignored buffer notification", zap.String("method", method), zap.Stringer("state", s.state), zap.Bool("sync", s.docCaps.Sync))
		return nil
	}
	return s.overlay
}

func didOpen(s *Server, params json.RawMessage) {
	ov := s.documents(NotifyDidOpen)
	if ov == nil {
		return
	}
	var p DidOpenTextDocumentParams
	if err := json.Unmarshal(params, &p); err != nil {
		s.log.Warn("bad textDocument/didOpen", zap.Error(err))
		return
	}
	path, ok := FileURIPath(p.TextDocument.URI)
	if !ok {
		s.log.Debug("not a file buffer", zap.String("uri", p.TextDocument.URI))
		return
	}
	d, err := ov.Open(p.TextDocument.URI, path, p.TextDocument.Version, p.TextDocument.Text)
	if err != nil {
		s.log.Warn("textDocument/didOpen", zap.Error(err))
		return
	}
	if d.TooLarge {
		s.notify(NotifyNotice, Notice{Level: "info", Source: "documents",
			Message: fmt.Sprintf("%s is over %d MiB: kin reads it from disk and does not edit it while it is open", path, files.MaxDocument>>20)})
	}
}

// changeEvent decodes a content change strictly: a change without text is
// not an empty one.
type changeEvent struct {
	Range *Range  `json:"range"`
	Text  *string `json:"text"`
}

func didChange(s *Server, params json.RawMessage) {
	ov := s.documents(NotifyDidChange)
	if ov == nil {
		return
	}
	var p struct {
		TextDocument   VersionedTextDocumentIdentifier `json:"textDocument"`
		ContentChanges []changeEvent                   `json:"contentChanges"`
	}
	err := json.Unmarshal(params, &p)
	var changes []files.TextChange
	for i, c := range p.ContentChanges {
		if c.Text == nil && err == nil {
			err = fmt.Errorf("contentChanges[%d] has no text", i)
		}
		tc := files.TextChange{}
		if c.Text != nil {
			tc.Text = *c.Text
		}
		if c.Range != nil {
			tc.Range = &files.Range{
				Start: files.Position{Line: c.Range.Start.Line, Character: c.Range.Start.Character},
				End:   files.Position{Line: c.Range.End.Line, Character: c.Range.End.Character},
			}
		}
		changes = append(changes, tc)
	}
	uri := p.TextDocument.URI
	if err != nil {
		if uri == "" {
			s.log.Warn("bad textDocument/didChange", zap.Error(err))
			return
		}
		ov.Lose(uri, "a textDocument/didChange kin could not read: "+err.Error())
		s.lostTrack(uri, err)
		return
	}
	if err := ov.Change(uri, p.TextDocument.Version, changes); err != nil {
		if errors.Is(err, files.ErrNotOpen) {
			s.log.Warn("textDocument/didChange", zap.Error(err))
			return
		}
		s.lostTrack(uri, err)
	}
}

// lostTrack tells the person that kin no longer follows a buffer, and how
// to bring it back.
func (s *Server) lostTrack(uri string, err error) {
	s.log.Warn("lost track of a buffer", zap.String("uri", uri), zap.Error(err))
	name := uri
	if p, ok := FileURIPath(uri); ok {
		name = p
	}
	s.notify(NotifyNotice, Notice{Level: "warning", Source: "documents",
		Message: fmt.Sprintf("kin lost track of your buffer of %s (%v): until you close it and open it again, kin neither reads nor edits it", name, err)})
}

func didClose(s *Server, params json.RawMessage) {
	ov := s.documents(NotifyDidClose)
	if ov == nil {
		return
	}
	var p DidCloseTextDocumentParams
	if err := json.Unmarshal(params, &p); err != nil {
		s.log.Warn("bad textDocument/didClose", zap.Error(err))
		return
	}
	if err := ov.Close(p.TextDocument.URI); err != nil {
		s.log.Debug("textDocument/didClose", zap.Error(err))
	}
}

// editorPort is the editor as files.Buffers sees it: workspace/applyEdit
// requests and workspace/didChangeFiles notifications on this connection.
type editorPort struct{ s *Server }

// ApplyEdit sends one workspace/applyEdit request and waits for its answer
// until ctx ends. A JSON-RPC error answer is the editor saying it did not
// apply the edit, and so is a request that could not be sent; a request
// sent and not answered is an error (the edit may be applied).
func (p editorPort) ApplyEdit(ctx context.Context, e files.Edit) (files.EditResult, error) {
	conn := p.s.connection()
	if conn == nil {
		return files.EditResult{Reason: "there is no connection to the editor"}, nil
	}
	edits := make([]TextEdit, 0, len(e.Edits))
	for _, te := range e.Edits {
		edits = append(edits, TextEdit{NewText: te.NewText, Range: Range{
			Start: Position{Line: te.Range.Start.Line, Character: te.Range.Start.Character},
			End:   Position{Line: te.Range.End.Line, Character: te.Range.End.Character},
		}})
	}
	params := ApplyWorkspaceEditParams{Label: e.Label, SessionID: e.SessionID, CallID: e.CallID, Edit: WorkspaceEdit{
		DocumentChanges: []TextDocumentEdit{{TextDocument: VersionedTextDocumentIdentifier{URI: e.URI, Version: e.Version}, Edits: edits}},
	}}
	p.s.log.Info("edit sent to the editor", zap.String("path", e.Path), zap.Int64("version", e.Version), zap.String("call", e.CallID))
	call, err := conn.DispatchCall(ctx, MethodApplyEdit, params)
	if err != nil {
		// Not sent (the connection is closed): nothing can have happened.
		return files.EditResult{Reason: fmt.Sprintf("the edit could not be sent (%v)", err)}, nil
	}
	var res ApplyWorkspaceEditResult
	err = call.Wait(ctx, &res)
	var rerr *jsonrpc2.Error
	switch {
	case errors.As(err, &rerr):
		return files.EditResult{Reason: fmt.Sprintf("the editor answered with an error: %s", rerr.Message)}, nil
	case err != nil:
		p.s.log.Warn("no answer to an edit", zap.String("path", e.Path), zap.Error(err))
		return files.EditResult{}, err
	}
	p.s.log.Info("edit answered", zap.String("path", e.Path), zap.Bool("applied", res.Applied), zap.String("reason", res.FailureReason))
	return files.EditResult{Applied: res.Applied, Reason: res.FailureReason, Saved: res.Saved}, nil
}

// FilesChanged sends workspace/didChangeFiles.
func (p editorPort) FilesChanged(changes []files.FileChange) {
	params := DidChangeFilesParams{Changes: make([]FileChangeEvent, 0, len(changes))}
	for _, c := range changes {
		typ := "changed"
		switch {
		case c.Created:
			typ = "created"
		case c.Deleted:
			typ = "deleted"
		}
		params.Changes = append(params.Changes, FileChangeEvent{URI: fileURI(c.Path), Path: c.Path, Type: typ})
	}
	p.s.notify(NotifyDidChangeFiles, params)
}

// FileURIPath returns the path of a file: URI ("file:///home/ana/a%20b.go"
// is /home/ana/a b.go; on Windows "file:///C:/src/a.go" is C:\src\a.go):
// kin serve's documents and kin acp's prompt blocks.
func FileURIPath(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" || (u.Host != "" && u.Host != "localhost") {
		return "", false
	}
	p := u.Path
	if runtime.GOOS == "windows" {
		if len(p) >= 3 && p[0] == '/' && p[2] == ':' {
			p = p[1:]
		}
		p = filepath.FromSlash(p)
	}
	if !filepath.IsAbs(p) {
		return "", false
	}
	return filepath.Clean(p), true
}

// fileURI is the file: URI of an absolute path.
func fileURI(path string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // C:/src/a.go
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}
