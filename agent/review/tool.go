package review

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"unicode"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/agent/visible"
)

// ToolName is the tool the review turn reports findings through; MCP tools
// may not take it.
const ToolName = "report_finding"

// Bounds on what the model may report: per review, and per finding.
const (
	MaxFindings = 100
	maxTitle    = 200  // characters
	maxBody     = 4000 // characters
	maxLines    = 10000
)

// Severities.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityInfo    = "info"
)

const schema = `{
  "type": "object",
  "properties": {
    "file": {"type": "string", "description": "The file's path relative to the repository root, as the diff names it after b/."},
    "startLine": {"type": "integer", "description": "First line of the problem in the new version of the file, 1-based."},
    "endLine": {"type": "integer", "description": "Last line of the problem (the same as startLine for one line)."},
    "severity": {"type": "string", "enum": ["error", "warning", "info"], "description": "error: a bug or security issue; warning: likely wrong or risky; info: worth a look."},
    "title": {"type": "string", "description": "One line naming the problem."},
    "body": {"type": "string", "description": "What is wrong, why, and how to fix it."}
  },
  "required": ["file", "startLine", "endLine", "severity", "title", "body"],
  "additionalProperties": false
}`

// Sink keeps and shows a finding (the session log, review/finding); an
// error is told to the model.
type Sink func(ctx context.Context, env tool.Env, f session.Finding) error

// Tool is report_finding for one review of a repository: each call is
// checked (a file inside Root, sane lines, bounded text) and handed to the
// sink. It changes nothing on disk, so ask mode offers it.
type Tool struct {
	root string
	sink Sink
	mu   sync.Mutex
	n    int
}

// NewTool is report_finding for a review of the repository at root.
func NewTool(root string, sink Sink) *Tool { return &Tool{root: root, sink: sink} }

func (*Tool) Spec() tool.Spec {
	return tool.Spec{Name: ToolName, Kind: tool.KindOther, Strict: true, Parameters: json.RawMessage(schema),
		Description: "Report one problem you found in the change under review, on the lines of the file it is in. Call it once per problem, as soon as you are sure of it; the person sees each finding on its lines at once."}
}

// ReadOnly: reporting a finding changes nothing in the workspace.
func (*Tool) ReadOnly() bool { return true }

type args struct {
	File      string `json:"file"`
	StartLine int    `json:"startLine"`
	EndLine   int    `json:"endLine"`
	Severity  string `json:"severity"`
	Title     string `json:"title"`
	Body      string `json:"body"`
}

func (t *Tool) Prepare(_ context.Context, env tool.Env, raw json.RawMessage) (*tool.Action, error) {
	f, err := t.Check(raw)
	if err != nil {
		return nil, err
	}
	return &tool.Action{Run: func(ctx context.Context, _ func(string)) tool.Result {
		t.mu.Lock()
		if t.n >= MaxFindings {
			t.mu.Unlock()
			return tool.Failed(fmt.Sprintf("not reported: this review already has %d findings, the most one review keeps; summarise the rest in your answer", MaxFindings))
		}
		t.n++
		n := t.n
		t.mu.Unlock()
		if err := t.sink(ctx, env, f); err != nil {
			return tool.Failed("not reported: " + err.Error())
		}
		rel, _ := filepath.Rel(t.root, f.File)
		return tool.Result{Status: tool.StatusCompleted,
			Output: fmt.Sprintf("Reported finding %d (%s) at %s:%d: %s", n, f.Severity, filepath.ToSlash(rel), f.Range.Start.Line+1, f.Title)}
	}}, nil
}

// Check reads a report_finding call's arguments into a finding, or says
// what is wrong with them (the model's output: anything at all).
func (t *Tool) Check(raw json.RawMessage) (session.Finding, error) {
	var a args
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return session.Finding{}, fmt.Errorf("%s: invalid arguments: %v", ToolName, err)
	}
	file, err := t.file(a.File)
	if err != nil {
		return session.Finding{}, err
	}
	if a.EndLine == 0 {
		a.EndLine = a.StartLine
	}
	switch {
	case a.StartLine < 1 || a.StartLine > 10_000_000:
		return session.Finding{}, fmt.Errorf("%s: startLine must be a line number (1-based)", ToolName)
	case a.EndLine < a.StartLine || a.EndLine-a.StartLine > maxLines:
		return session.Finding{}, fmt.Errorf("%s: endLine must be at or after startLine, at most %d lines on", ToolName, maxLines)
	}
	switch a.Severity {
	case SeverityError, SeverityWarning, SeverityInfo:
	default:
		return session.Finding{}, fmt.Errorf("%s: severity must be error, warning or info", ToolName)
	}
	title := oneLine(a.Title, maxTitle)
	if title == "" {
		return session.Finding{}, fmt.Errorf("%s: title is empty", ToolName)
	}
	return session.Finding{File: file, Severity: a.Severity, Title: title, Body: text(a.Body, maxBody),
		Range: session.Range{Start: session.Position{Line: a.StartLine - 1}, End: session.Position{Line: a.EndLine}}}, nil
}

// file is a finding's file, absolute, inside the repository: a path the
// model names relative to the root (a/ or b/ of the diff tolerated), or
// absolute beneath it. Nothing is read.
func (t *Tool) file(p string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("%s: file %q %s; name it relative to the repository root as the diff does", ToolName, p, why)
	}
	if p == "" || strings.ContainsFunc(p, unicode.IsControl) || len(p) > 4096 {
		return bad("is not a path")
	}
	if filepath.IsAbs(p) {
		c := filepath.Clean(p)
		if !boundary.Within(t.root, c) || c == t.root {
			return bad("is outside the repository")
		}
		return c, nil
	}
	p = strings.TrimPrefix(strings.TrimPrefix(filepath.ToSlash(p), "b/"), "a/")
	c := path.Clean(p)
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return bad("is outside the repository")
	}
	return filepath.Join(t.root, filepath.FromSlash(c)), nil
}

// oneLine is s on one line, without control characters, at most n
// characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)), " ")
	return visible.Cut(s, n)
}

// text is s without control characters but newlines and tabs, at most n
// characters.
func text(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && unicode.IsControl(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "�"))
	return visible.Cut(strings.TrimSpace(s), n)
}

// Text is a finding for a person, in a list: "error calc.go:12  Title"
// with its body indented below (kin acp's message, kin chat's list).
func Text(root string, f session.Finding) string {
	name := f.File
	if rel, err := filepath.Rel(root, f.File); err == nil && root != "" && !strings.HasPrefix(rel, "..") {
		name = filepath.ToSlash(rel)
	}
	lines := fmt.Sprint(f.Range.Start.Line + 1)
	if last := f.Range.End.Line; last > f.Range.Start.Line+1 {
		lines += fmt.Sprintf("-%d", last)
	}
	out := fmt.Sprintf("%s %s:%s  %s", f.Severity, name, lines, f.Title)
	if f.Body != "" {
		out += "\n    " + strings.ReplaceAll(f.Body, "\n", "\n    ")
	}
	return out
}
