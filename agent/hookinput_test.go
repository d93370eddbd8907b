package agent

import (
	"strings"
	"testing"
)

// A hook's updatedInput replaces the call's input whole; file_path (which
// kin's input carried beside path, for hooks written for Claude Code)
// becomes path when the hook changed it, and is dropped when it did not.
func TestHookArgsMapsFilePath(t *testing.T) {
	args := `{"path":"a.txt","content":"x"}`
	sent := `{"path":"a.txt","file_path":"/ws/a.txt","content":"x"}`
	cases := []struct{ updated, want, err string }{
		{`{"command":"echo safe"}`, `{"command":"echo safe"}`, ""},
		// Claude Code's way: file_path moved
		{`{"file_path":"/ws/.git/hooks/pre-commit","content":"y"}`, `{"content":"y","path":"/ws/.git/hooks/pre-commit"}`, ""},
		// the input echoed back with file_path moved and kin's path stale
		{`{"path":"a.txt","file_path":"/ws/b.txt","content":"x"}`, `{"content":"x","path":"/ws/b.txt"}`, ""},
		// kin's way: path moved, file_path as it was sent
		{`{"path":"b.txt","file_path":"/ws/a.txt","content":"x"}`, `{"content":"x","path":"b.txt"}`, ""},
		{`{"path":"b.txt","file_path":"/ws/c.txt","content":"x"}`, "", "two different files"},
		{`{"file_path":7}`, "", "file_path must be a string"},
		{`"echo safe"`, "", "must be a JSON object"},
		{`[{"command":"x"}]`, "", "must be a JSON object"},
	}
	for _, c := range cases {
		got, err := hookArgs([]byte(c.updated), []byte(args), []byte(sent))
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.updated, err, c.err)
		case c.err == "" && (err != nil || string(got) != c.want):
			t.Errorf("%s: %s %v, want %s", c.updated, got, err, c.want)
		}
	}
	// a tool whose own argument is file_path keeps it as the hook gave it
	got, err := hookArgs([]byte(`{"file_path":"/x"}`), []byte(`{"file_path":"/y"}`), []byte(`{"file_path":"/y"}`))
	if err != nil || string(got) != `{"file_path":"/x"}` {
		t.Errorf("native file_path: %s %v", got, err)
	}
}
