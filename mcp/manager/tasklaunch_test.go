package manager_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/manager"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// A resumed task is followed only on the launch its call ran on: the same
// entry is followed to its result; a record without a launch (an older
// kin's), or a project's entry of the same name shadowing the person's
// (same URL, another scope: what it runs is the repository's to say), is
// not asked about it, and the call is unknown.
func TestFollowTaskOnlyOnTheLaunchItRanOn(t *testing.T) {
	var finish atomic.Bool
	s := &mcptest.TaskServer{State: mcptest.WorkingUntil(&finish, "step", "job done")}
	url := mcptest.ServeHTTPHandler(t, s).URL
	home, work := t.TempDir(), t.TempDir()
	writeConfig(t, home, map[string]any{"jobs": map[string]any{"type": "http", "url": url}})
	m := manager.New(manager.Options{Workdir: work, KinHome: home, Host: &host{}, Env: env(nil)})
	t.Cleanup(m.Close)
	m.Start(context.Background())
	tl := toolNamed(m, "mcp__jobs__job")
	if tl == nil {
		t.Fatalf("no job tool: %+v", state(m, "jobs"))
	}
	a, err := tl.Prepare(context.Background(), tool.Env{}, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	// The call is recorded as a task, then its turn ends (kin stops).
	var mu sync.Mutex
	var rec tool.Task
	ctx, cancel := context.WithCancel(context.Background())
	ctx = tool.WithTaskRecorder(ctx, func(tk tool.Task) error {
		mu.Lock()
		rec = tk
		mu.Unlock()
		cancel()
		return nil
	})
	a.Run(ctx, nil)
	mu.Lock()
	got := rec
	mu.Unlock()
	if got.Server != "jobs" || got.ID != mcptest.TaskID || !strings.HasPrefix(got.Launch, "launch:sha256:") {
		t.Fatalf("recorded %+v", got)
	}
	finish.Store(true)
	follow := func(m *manager.Manager, tk tool.Task) tool.Result {
		fctx, done := context.WithTimeout(context.Background(), 20*time.Second)
		defer done()
		return m.FollowTask(fctx, tk, "mcp__jobs__job", tool.Env{}, nil)
	}

	gets := s.Gets.Load()
	old := got
	old.Launch = ""
	if r := follow(m, old); r.Status != tool.StatusUnknown || !strings.Contains(r.Output, "launches another server") || s.Gets.Load() != gets {
		t.Errorf("a record without its launch: %+v (gets %d -> %d)", r, gets, s.Gets.Load())
	}

	// The repository's entry of the same name shadows the person's.
	if err := os.MkdirAll(filepath.Dir(config.ProjectPath(work)), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"jobs": map[string]any{"type": "http", "url": url}}})
	if err := os.WriteFile(config.ProjectPath(work), b, 0o644); err != nil {
		t.Fatal(err)
	}
	shadow := manager.New(manager.Options{Workdir: work, KinHome: home, Host: &host{}, Env: env(nil)})
	t.Cleanup(shadow.Close)
	shadow.Start(context.Background())
	if r := follow(shadow, got); r.Status != tool.StatusUnknown || !strings.Contains(r.Output, "launches another server") || s.Gets.Load() != gets {
		t.Errorf("shadowed by the project's entry: %+v (gets %d -> %d)", r, gets, s.Gets.Load())
	}

	if r := follow(m, got); r.Status != tool.StatusCompleted || !strings.Contains(r.Output, "job done") {
		t.Errorf("on its own launch: %+v", r)
	}
	if s.Calls.Load() != 1 {
		t.Errorf("calls %d", s.Calls.Load())
	}
}
