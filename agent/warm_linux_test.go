package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/agent/tool"
)

// Opening a session walks its workspace ahead of the first confined
// command, so that command reads (almost) no folder; in a kin whose
// commands are not confined, nothing is walked.
func TestOpeningASessionWarmsTheWalk(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	const folders = 60
	for i := range folders {
		d := filepath.Join(root, fmt.Sprintf("pkg%d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "a.go"), nil, 0o644)
	}
	// folders changed within the last second are read again by every
	// walk (racily clean): let them age first
	time.Sleep(1100 * time.Millisecond)
	home := t.TempDir()
	for _, confined := range []bool{false, true} {
		cfg := sandbox.Config{Hidden: []string{home}, RunDir: filepath.Join(home, "run")}
		if !confined {
			cfg.Mode = sandbox.ModeOff
		}
		if st := sandbox.New(cfg).Status(); confined && !st.Confined {
			t.Skip("commands cannot be confined here: " + st.Reason)
		}
		// a sandbox not probed yet, as when an editor opens a session
		// before kin's probe after initialize ended: the walk waits for it
		sb := sandbox.New(cfg)
		m := modeltest.New()
		defer m.Close()
		svc := New(Options{Home: home, Model: model.Config{APIKey: "k", BaseURL: m.URL(), Model: "mock"},
			Tools: tool.Static(nil), Events: events{done: make(chan TurnDone, 8)}, Sandbox: sb})
		defer svc.Shutdown()
		before := boundary.FoldersRead()
		if _, err := svc.NewSession(SessionOptions{Roots: []string{root}}); err != nil {
			t.Fatal(err)
		}
		if !confined {
			time.Sleep(200 * time.Millisecond)
			if n := boundary.FoldersRead() - before; n != 0 {
				t.Fatalf("an unconfined kin walked %d folders when a session opened", n)
			}
			continue
		}
		// the walk ran in the background (after the sandbox's probe, which
		// starts bubblewrap): wait until it read the tree; the walk below
		// waits for the rest of it (one walk of a folder at a time)
		for deadline := time.Now().Add(60 * time.Second); boundary.FoldersRead()-before < folders; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("opening a session read %d of the %d folders in 60 s", boundary.FoldersRead()-before, folders)
			}
		}
		ws, err := boundary.NewWorkspace([]string{root}, home)
		if err != nil {
			t.Fatal(err)
		}
		before = boundary.FoldersRead()
		ws.Protect(sb.Extra(ws.Roots()))
		if n := boundary.FoldersRead() - before; n > 2 {
			t.Fatalf("the first command's walk read %d folders after the session opened (want the warmed ones reused)", n)
		}
	}
}
