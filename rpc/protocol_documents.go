package rpc

// The editor's buffers (PROTOCOL.md "Documents"): LSP's text document
// synchronisation from the editor, LSP's workspace/applyEdit from kin, and
// kin's workspace/didChangeFiles after it wrote files on disk.

// Methods of this section.
const (
	NotifyDidOpen        = "textDocument/didOpen"
	NotifyDidChange      = "textDocument/didChange"
	NotifyDidClose       = "textDocument/didClose"
	MethodApplyEdit      = "workspace/applyEdit" // kin -> editor request
	NotifyDidChangeFiles = "workspace/didChangeFiles"
)

// PositionEncoding is how kin counts a Position's character: UTF-16 code
// units, as LSP does by default.
const PositionEncoding = "utf-16"

// TextDocumentsClientCapabilities says what the editor does with its
// buffers.
type TextDocumentsClientCapabilities struct {
	// Sync: the editor sends didOpen, didChange and didClose for every
	// buffer of a file (file: URI) it has open.
	Sync bool `json:"sync"`
	// ApplyEdit: the editor answers workspace/applyEdit for its open
	// buffers.
	ApplyEdit bool `json:"applyEdit"`
}

// TextDocumentsServerCapabilities says what kin does on this connection.
type TextDocumentsServerCapabilities struct {
	Sync             bool   `json:"sync"`
	ApplyEdit        bool   `json:"applyEdit"`
	PositionEncoding string `json:"positionEncoding"`
}

// Position is LSP's: zero-based line and UTF-16 offset in the line.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is LSP's: Start up to, not including, End.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// TextDocumentItem is LSP's: an opened buffer.
type TextDocumentItem struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int64  `json:"version"`
	Text       string `json:"text"`
}

// DidOpenTextDocumentParams is textDocument/didOpen's params.
type DidOpenTextDocumentParams struct {
	TextDocument TextDocumentItem `json:"textDocument"`
}

// VersionedTextDocumentIdentifier is LSP's.
type VersionedTextDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version int64  `json:"version"`
}

// TextDocumentContentChangeEvent is LSP's: Text replaces Range, or the
// whole buffer when Range is absent. RangeLength is accepted and ignored
// (LSP deprecated it).
type TextDocumentContentChangeEvent struct {
	Range       *Range `json:"range,omitempty"`
	RangeLength *int   `json:"rangeLength,omitempty"`
	Text        string `json:"text"`
}

// DidChangeTextDocumentParams is textDocument/didChange's params.
type DidChangeTextDocumentParams struct {
	TextDocument   VersionedTextDocumentIdentifier  `json:"textDocument"`
	ContentChanges []TextDocumentContentChangeEvent `json:"contentChanges"`
}

// TextDocumentIdentifier is LSP's.
type TextDocumentIdentifier struct {
	URI string `json:"uri"`
}

// DidCloseTextDocumentParams is textDocument/didClose's params.
type DidCloseTextDocumentParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
}

// TextEdit is LSP's.
type TextEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

// TextDocumentEdit is LSP's: edits to one buffer at one version.
type TextDocumentEdit struct {
	TextDocument VersionedTextDocumentIdentifier `json:"textDocument"`
	Edits        []TextEdit                      `json:"edits"`
}

// WorkspaceEdit is the part of LSP's kin sends: documentChanges.
type WorkspaceEdit struct {
	DocumentChanges []TextDocumentEdit `json:"documentChanges"`
}

// ApplyWorkspaceEditParams is workspace/applyEdit's params: LSP's, plus
// which session and call edit.
type ApplyWorkspaceEditParams struct {
	Label     string        `json:"label,omitempty"`
	Edit      WorkspaceEdit `json:"edit"`
	SessionID string        `json:"sessionId,omitempty"`
	CallID    string        `json:"callId,omitempty"`
}

// ApplyWorkspaceEditResult is workspace/applyEdit's result: LSP's, plus
// saved.
type ApplyWorkspaceEditResult struct {
	Applied       bool   `json:"applied"`
	FailureReason string `json:"failureReason,omitempty"`
	// Saved: the editor saved the buffer after applying the edit.
	Saved bool `json:"saved,omitempty"`
}

// DidChangeFilesParams is workspace/didChangeFiles's params.
type DidChangeFilesParams struct {
	Changes []FileChangeEvent `json:"changes"`
}

// FileChangeEvent is one file kin wrote on disk.
type FileChangeEvent struct {
	URI  string `json:"uri"`
	Path string `json:"path"`
	Type string `json:"type"` // "created", "changed" or "deleted" (an undo removed a file a turn created)
}
