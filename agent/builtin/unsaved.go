package builtin

import (
	"strings"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/files"
	"github.com/kin-dev/kin/agent/tool"
)

// unsavedNote lists the files open in the editor with changes not saved to
// disk, which a command does not see (it reads the disk), and adds the
// sentence that says so to warning. A front end without an editor's
// buffers lists none.
func unsavedNote(env tool.Env, ws *boundary.Workspace, warning string) ([]string, string) {
	l, ok := files.Find[files.UnsavedLister](filesOf(env))
	if !ok {
		return nil, warning
	}
	var names []string
	for _, p := range l.Unsaved() {
		names = append(names, ws.DisplayRealPath(p))
	}
	if len(names) == 0 {
		return nil, warning
	}
	note := "The command sees the saved files, not the unsaved changes in: " + strings.Join(names, ", ") + "."
	if warning != "" {
		note = warning + " " + note // one line: front ends show a warning as one
	}
	return names, note
}
