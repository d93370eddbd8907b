package permission

import (
	"slices"
	"strings"

	"github.com/kin-dev/kin/agent/visible"
)

// forDisplay returns req as a person may safely read it: in every field the
// editor shows, characters that hide or reorder text (bidi controls,
// zero-width and other format characters, control characters, bytes that
// are not UTF-8) are escaped, so "invoice_\u202egpj.exe" shows as written
// and not as "invoice_exe.jpg". Ids, kinds, the grant key and option ids
// are kin's own and left as they are.
//
// Only the request is escaped: what the call runs or writes is held by its
// tool.Action, never read back from the request, so an approved diff still
// writes exactly the bytes it proposed.
func forDisplay(req Request) Request {
	e := visible.Escape
	req.ToolName = e(req.ToolName)
	req.Title = e(req.Title)
	// visible.Escape keeps a "\r\n" line ending (a CRLF file's diff); in a
	// command (a call's, a hook's in a trust item's Detail) it is part of
	// the word before it ("cd sub\r" fails and the next line runs where the
	// command started), so it is spelled out.
	cr := strings.NewReplacer("\r", `\r`)
	req.Command = cr.Replace(e(req.Command))
	req.Cwd = cr.Replace(e(req.Cwd))
	if req.UnsavedFiles != nil {
		req.UnsavedFiles = slices.Clone(req.UnsavedFiles)
		for i := range req.UnsavedFiles {
			req.UnsavedFiles[i] = e(req.UnsavedFiles[i])
		}
	}
	req.Server = e(req.Server)
	req.Destination = cr.Replace(e(req.Destination)) // a stdio server's command line
	req.Tool = e(req.Tool)
	req.Arguments = e(req.Arguments)
	req.Warning = e(req.Warning)
	req.Transport = e(req.Transport)
	req.Scope = e(req.Scope)
	if req.Diffs != nil {
		req.Diffs = slices.Clone(req.Diffs)
		for i := range req.Diffs {
			d := &req.Diffs[i]
			d.Path, d.OldText, d.NewText, d.Unified = e(d.Path), e(d.OldText), e(d.NewText), e(d.Unified)
		}
	}
	if req.Grant != nil {
		g := *req.Grant
		g.Label = e(g.Label)
		req.Grant = &g
	}
	if req.Items != nil {
		req.Items = slices.Clone(req.Items)
		for i := range req.Items {
			it := &req.Items[i]
			it.Path, it.Name, it.Detail = e(it.Path), e(it.Name), cr.Replace(e(it.Detail)) // a hook's command
		}
	}
	if req.Options != nil {
		req.Options = slices.Clone(req.Options)
		for i := range req.Options {
			req.Options[i].Name = e(req.Options[i].Name)
		}
	}
	return req
}
