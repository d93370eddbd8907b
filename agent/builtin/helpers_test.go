package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/tool"
)

// workspace makes a temporary workspace root and the Env naming it.
func workspace(t testing.TB) (string, tool.Env) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return root, tool.Env{SessionID: "s", TurnID: "t", CallID: "c", Roots: []string{root}}
}

// files writes name → content below dir (creating directories).
func files(t testing.TB, dir string, m map[string]string) {
	t.Helper()
	for name, content := range m {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func getTool(t testing.TB, name string, opts builtin.Options) tool.Tool {
	t.Helper()
	for _, tl := range builtin.Tools(opts) {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

// prepare calls a tool's Prepare with args (a JSON string or a value to
// marshal).
func prepare(t testing.TB, name string, env tool.Env, args any) (*tool.Action, error) {
	t.Helper()
	return prepareWith(t, name, builtin.Options{}, env, args)
}

func prepareWith(t testing.TB, name string, opts builtin.Options, env tool.Env, args any) (*tool.Action, error) {
	t.Helper()
	var raw json.RawMessage
	switch a := args.(type) {
	case string:
		raw = json.RawMessage(a)
	default:
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		raw = b
	}
	return getTool(t, name, opts).Prepare(context.Background(), env, raw)
}

// mustPrepare fails the test on a Prepare error.
func mustPrepare(t testing.TB, name string, env tool.Env, args any) *tool.Action {
	t.Helper()
	a, err := prepare(t, name, env, args)
	if err != nil {
		t.Fatalf("%s Prepare(%v): %v", name, args, err)
	}
	return a
}

// call prepares and runs a call that needs no approval.
func call(t testing.TB, name string, env tool.Env, args any) tool.Result {
	t.Helper()
	a := mustPrepare(t, name, env, args)
	if a.Approval != nil {
		t.Fatalf("%s: unexpected approval %+v", name, a.Approval)
	}
	return a.Run(context.Background(), nil)
}

func wantStatus(t testing.TB, r tool.Result, want tool.Status) {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %s, want %s; output:\n%s", r.Status, want, r.Output)
	}
}

func wantContains(t testing.TB, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Fatalf("output lacks %q:\n%s", sub, s)
		}
	}
}

func wantNotContains(t testing.TB, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			t.Fatalf("output has %q:\n%s", sub, s)
		}
	}
}

func wantErr(t testing.TB, err error, subs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one with %q", subs)
	}
	wantContains(t, err.Error(), subs...)
}
