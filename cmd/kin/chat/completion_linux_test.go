//go:build linux

package chat_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Tab shows and inserts names kin chat did not write: a file name of the
// workspace (a cloned repository's), an MCP server's resources and values.
// The editor writes a candidate as it is, so one with a control character
// would drive the terminal: here an OSC 52 that sets the clipboard, and a
// title. Such a name is not offered (it could not be shown as it is); the
// others are.
func TestBinaryEditorCompletionNoEscapes(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{
		"evil\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaAo=\x07one",
		"evil\x1b]0;owned\x07two",
		"evil\u009b2Jthree", // CSI as a UTF-8 C1 control: xterm acts on it
		"evilfour",
		"evilfive",
	} {
		if err := os.WriteFile(filepath.Join(e.WS, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	term := e.terminal(t)
	term.awaitPrompt("You> ")
	term.typeIn("@ev\t")
	term.await("You> @evil", 1)
	term.typeIn("\t") // the list of candidates
	term.await("evilfive", 1)
	term.await("evilfour", 1)
	term.typeIn("\x15") // Ctrl-U: the line goes
	term.awaitPrompt("You> ")
	term.quit()
	raw := term.raw.String()
	for _, bad := range []string{"\x1b]", "\u009b"} {
		if strings.Contains(raw, bad) {
			t.Errorf("a file name's control sequence %q reached the terminal", bad)
		}
	}
}
