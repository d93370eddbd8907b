package chat

import (
	"io"
	"testing"
)

// Ctrl-Z suspends kin chat; after fg the line being typed goes on as it
// was: nothing of the suspension reaches the editor as a key.
func TestSuspendLeavesTheLineAlone(t *testing.T) {
	in := newFeed()
	suspended := 0
	kr := &keyReader{out: in, suspend: func() { suspended++ }}
	kr.write([]byte("ab\x1acd"))
	in.close()
	raw, err := io.ReadAll(in)
	if err != nil {
		t.Fatal(err)
	}
	e := &editor{scr: newScreen(io.Discard, false)}
	var line []rune
	for _, r := range string(raw) {
		if k, ok := e.filter(r); ok {
			line = append(line, k)
		}
	}
	if suspended != 1 || string(line) != "abcd" {
		t.Errorf("after Ctrl-Z the editor got %q (suspended %d times), want \"abcd\"", string(line), suspended)
	}
}
