package permission

import (
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/tool"
)

// A carriage return before a line break in a command is part of the word
// before it: bash's "cd sub\r" fails and the next line runs where the
// command started. visible.Escape keeps a "\r\n" line ending (a CRLF
// file's diff), so an editor showed "cd sub" over "rm -rf ./*", a removal
// in sub to read, in the workspace to run. A command and its folder spell
// out every carriage return, and so does a hook's command in a trust
// request.
func TestForDisplaySpellsOutCarriageReturnsOfACommand(t *testing.T) {
	req := forDisplay(Request{Approval: tool.Approval{Command: "cd sub\r\nrm -rf ./*\u200b", Cwd: "/ws/a\r\nb", Destination: "srv --dir x\r\n"},
		Items: []TrustItem{{Kind: "hook", Detail: "cd sub\r\nrm -rf ./*"}}})
	if want := `cd sub\r` + "\n" + `rm -rf ./*\u200b`; req.Command != want {
		t.Errorf("command shown as %q, want %q", req.Command, want)
	}
	if strings.Contains(req.Cwd, "\r") {
		t.Errorf("folder shown as %q", req.Cwd)
	}
	if strings.Contains(req.Destination, "\r") {
		t.Errorf("a server's command line shown as %q", req.Destination)
	}
	if d := req.Items[0].Detail; strings.Contains(d, "\r") {
		t.Errorf("a hook's command shown as %q", d)
	}
}
