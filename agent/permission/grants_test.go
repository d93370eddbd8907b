package permission_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/tool"
)

func open(t *testing.T, path string) *permission.Grants {
	t.Helper()
	g, err := permission.LoadGrants(path)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Two kin processes (two Grants on one file, each with its own cache)
// granting at once both keep their grants; each sees the other's at once.
func TestConcurrentProcessesLoseNoGrant(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grants.json")
	a, b := open(t, path), open(t, path)
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		for _, g := range []*permission.Grants{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := g.Add("s", tool.Grant{Key: fmt.Sprintf("bash:cmd%d-%p", i, g)}, true); err != nil {
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
	for _, g := range []*permission.Grants{a, b, open(t, path)} {
		if got := len(g.List()); got != 2*n {
			t.Errorf("%d grants, want %d", got, 2*n)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
}

// A grant revoked by another process stops answering at once and is never
// written back by this one.
func TestRevokedElsewhereIsNotHonoured(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grants.json")
	serve, cli := open(t, path), open(t, path)
	echo := tool.Grant{Key: "bash:echo"}
	gr, err := serve.Add("s", echo, true)
	if err != nil || !serve.Allows("other-session", echo) {
		t.Fatalf("add: %v", err)
	}
	if found, err := cli.Revoke(gr.ID); !found || err != nil {
		t.Fatalf("revoke: %v %v", found, err)
	}
	if serve.Allows("other-session", echo) {
		t.Fatal("a revoked grant still answers")
	}
	if _, err := serve.Add("s", tool.Grant{Key: "bash:pwd"}, true); err != nil {
		t.Fatal(err)
	}
	if open(t, path).Allows("x", echo) {
		t.Fatal("the revoked grant was written back")
	}
}

// An MCP grant answers only the definition it was given for; RevokeKey
// keeps the grants of the definition named.
func TestGrantFingerprints(t *testing.T) {
	g := open(t, filepath.Join(t.TempDir(), "grants.json"))
	v1 := tool.Grant{Key: "mcp:sha256:x/query", Fingerprint: "v1"}
	v2 := tool.Grant{Key: v1.Key, Fingerprint: "v2"}
	if _, err := g.Add("s", v1, true); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Add("s", v1, false); err != nil {
		t.Fatal(err)
	}
	if !g.Allows("s", v1) || g.Allows("s", v2) {
		t.Fatal("a grant answered another definition")
	}
	if removed, err := g.RevokeKey(v1.Key, "v1"); removed || err != nil {
		t.Fatalf("kept definition revoked: %v %v", removed, err)
	}
	if removed, err := g.RevokeKey(v1.Key, "v2"); !removed || err != nil || g.Allows("s", v1) || len(g.List()) != 0 {
		t.Fatalf("stale grants kept: %v %v %v", removed, err, g.List())
	}
}

// A grants file that is not JSON grants nothing and is never overwritten.
func TestMalformedGrantsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grants.json")
	const bad = `[{"id":"p_1","key":"bash:rm"`
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	g, err := permission.LoadGrants(path)
	if err == nil || g.Allows("s", tool.Grant{Key: "bash:rm"}) {
		t.Fatalf("malformed file: err %v", err)
	}
	if _, err := g.Add("s", tool.Grant{Key: "bash:ls"}, true); err == nil {
		t.Error("Add overwrote a malformed file")
	}
	if b, _ := os.ReadFile(path); string(b) != bad {
		t.Errorf("file changed: %s", b)
	}
}

// BenchmarkAllowsPermanent is the cost of one decision a permanent grant
// answers: a stat of grants.json, the file unchanged (20 grants in it).
func BenchmarkAllowsPermanent(b *testing.B) {
	path := filepath.Join(b.TempDir(), "grants.json")
	g, _ := permission.LoadGrants(path)
	for i := range 20 {
		if _, err := g.Add("s", tool.Grant{Key: fmt.Sprintf("bash:cmd%d", i)}, true); err != nil {
			b.Fatal(err)
		}
	}
	last := tool.Grant{Key: "bash:cmd19"}
	for b.Loop() {
		if !g.Allows("other", last) {
			b.Fatal("not allowed")
		}
	}
}
