package acp

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/files"
)

// A client that writes but does not read: kin checks the disk against what
// the diff was shown against. A file swapped meanwhile for a sparse
// terabyte is a conflict found by its size, not read whole (nothing is
// sent to the client either: no connection is needed to find it).
func TestAFileGrownPastTheDiffIsAConflictNotARead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.txt")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Skip("no sparse files here:", err)
	}
	f.Close()
	_, err = clientFiles{write: true}.Write(context.Background(), files.Change{Path: p, Existed: true, Old: []byte("old\n"), New: []byte("new\n")})
	if !errors.Is(err, files.ErrConflict) {
		t.Fatalf("%v, want a conflict", err)
	}
}

// fsClient is an ACP client that serves one folder's files from memory,
// each request on a goroutine of its own (as editors answer them).
type fsClient struct {
	mu      sync.Mutex
	content map[string]string
	// reads counts fs/read_text_file requests; a read waits a moment for
	// another to arrive, so that two writes kin runs side by side both
	// read before either writes, if kin lets them.
	reads   int
	another chan struct{}
}

func (c *fsClient) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	switch req.Method {
	case MethodReadTextFile:
		var p ReadTextFileRequest
		_ = json.Unmarshal(*req.Params, &p)
		c.mu.Lock()
		c.reads++
		if c.reads == 2 {
			close(c.another)
		}
		c.mu.Unlock()
		select {
		case <-c.another:
		case <-time.After(300 * time.Millisecond):
		}
		c.mu.Lock()
		text := c.content[p.Path]
		c.mu.Unlock()
		_ = conn.Reply(ctx, req.ID, ReadTextFileResponse{Content: text})
	case MethodWriteTextFile:
		var p WriteTextFileRequest
		_ = json.Unmarshal(*req.Params, &p)
		c.mu.Lock()
		c.content[p.Path] = p.Content
		c.mu.Unlock()
		_ = conn.Reply(ctx, req.ID, Empty{})
	}
}

// Two approved edits of one file running side by side through the
// client (delegate calls of one answer run at once, each subagent writing
// through its parent's client) each read the content their diff was shown
// against, and each sent its write: one change was lost and both were
// reported done. As on disk (files.Disk), the second finds the file
// changed and says so.
func TestSideBySideWritesThroughTheClientLoseNothing(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.go")
	if err := os.WriteFile(p, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fc := &fsClient{content: map[string]string{p: "a\nb\n"}, another: make(chan struct{})}
	a, b := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cc := jsonrpc2.NewConn(ctx, newStream(b, nil, nil), jsonrpc2.AsyncHandler(fc))
	defer cc.Close()
	s := &Server{log: zap.NewNop(), sessions: map[string]*session{}}
	s.conn = jsonrpc2.NewConn(ctx, newStream(a, nil, nil), jsonrpc2.AsyncHandler(s))
	defer s.conn.Close()
	fa := clientFiles{s: s, sessionID: "s_1", read: true, write: true}

	edits := []string{"a\nA\nb\n", "a\nb\nB\n"}
	errs := make([]error, len(edits))
	var wg sync.WaitGroup
	for i, next := range edits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = fa.Write(ctx, files.Change{Path: p, Existed: true, Old: []byte("a\nb\n"), New: []byte(next)})
		}()
	}
	wg.Wait()
	fc.mu.Lock()
	got := fc.content[p]
	fc.mu.Unlock()
	done := 0
	for i, err := range errs {
		switch {
		case err == nil:
			done++
			if got != edits[i] {
				t.Errorf("edit %d was reported done, but the file holds %q", i, got)
			}
		case !errors.Is(err, files.ErrConflict):
			t.Errorf("edit %d: %v, want done or a conflict", i, err)
		}
	}
	if done != 1 {
		t.Errorf("%d edits done, want 1 (the other finds the file changed): %v", done, errs)
	}
}
