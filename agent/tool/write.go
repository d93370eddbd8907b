package tool

import "context"

// FileWrite is one file write a built-in tool is about to make, as the
// session's checkpoints keep it (so the turn can be undone).
type FileWrite struct {
	// Path is the file: absolute, clean, with symlinks resolved.
	Path string
	// Old is what is there now; Existed is false when there is no file.
	Old     []byte
	Existed bool
	// New is what the tool writes.
	New []byte
}

// BeforeWrite is called with every file write before it happens; a write
// it fails is not made.
type BeforeWrite func(ctx context.Context, w FileWrite) error
