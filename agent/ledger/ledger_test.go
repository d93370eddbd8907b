package ledger_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/ledger"
)

// An item is trusted with the digest the person saw; another digest is
// "changed", and revoking asks again.
func TestItemsAreKeyedByProjectAndDigest(t *testing.T) {
	home := t.TempDir()
	l := ledger.Open(home)
	hook := ledger.Item{Kind: ledger.KindHook, Project: "/p", Path: "/p/.kin/hooks.json#PreToolUse/0/0", Digest: "sha256:aa", Display: "sh ./guard.sh"}
	if st := l.Status(hook); st != ledger.StateNew {
		t.Fatalf("before trust: %s", st)
	}
	if err := l.Trust(hook); err != nil {
		t.Fatal(err)
	}
	if st := l.Status(hook); st != ledger.StateTrusted {
		t.Fatalf("after trust: %s", st)
	}
	changed := hook
	changed.Digest = "sha256:bb"
	if st := l.Status(changed); st != ledger.StateChanged {
		t.Fatalf("changed content: %s", st)
	}
	other := hook
	other.Project = "/q"
	if st := l.Status(other); st != ledger.StateNew {
		t.Fatalf("the same path in another project: %s", st)
	}
	if fi, err := os.Stat(l.Path()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("ledger file: %v %v", fi, err)
	}
	if err := l.Revoke(hook.ID()); err != nil {
		t.Fatal(err)
	}
	if st := l.Status(hook); st != ledger.StateNew {
		t.Fatalf("after revoke: %s", st)
	}
	if err := l.Revoke(hook.ID()); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("revoking again: %v", err)
	}
}

// Today's launch trust (mcp_trust.json version 2) is the ledger's launches
// section as it is: read without asking, carried over on the first write.
func TestLaunchTrustIsMigrated(t *testing.T) {
	home := t.TempDir()
	v2 := `{"version":2,"launches":{"launch:sha256:abc":{"name":"fs","scope":"global","hash":"sha256:1","transport":"stdio","display":"npx srv","trustedAt":"2026-01-02T03:04:05Z"}}}`
	if err := os.WriteFile(filepath.Join(home, ledger.LegacyFileName), []byte(v2), 0o600); err != nil {
		t.Fatal(err)
	}
	l := ledger.Open(home)
	f, err := l.Read()
	if err != nil || f.Launches["launch:sha256:abc"] == nil {
		t.Fatalf("read before migration: %v %+v", err, f)
	}
	if err := l.Trust(ledger.Item{Kind: ledger.KindSkill, Project: "/p", Path: "/p/.agents/skills/x", Digest: "sha256:cc"}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Version  int                        `json:"version"`
		Launches map[string]json.RawMessage `json:"launches"`
	}
	if err := json.Unmarshal(data, &got); err != nil || got.Version != ledger.Version || !strings.Contains(string(got.Launches["launch:sha256:abc"]), `"npx srv"`) {
		t.Fatalf("after migration: %v\n%s", err, data)
	}
	if _, err := os.Stat(filepath.Join(home, ledger.LegacyFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the old file is still there: %v", err)
	}
}

// A ledger that cannot be parsed trusts nothing and is never overwritten.
func TestBrokenLedgerFailsClosed(t *testing.T) {
	home := t.TempDir()
	l := ledger.Open(home)
	it := ledger.Item{Kind: ledger.KindInstructions, Project: "/p", Path: "/p/AGENTS.md", Digest: "sha256:dd"}
	if err := l.Trust(it); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.Path(), []byte("{broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	if l.Status(it) != ledger.StateNew || l.Check() == nil {
		t.Fatal("a broken ledger still trusts")
	}
	if err := l.Trust(it); err == nil {
		t.Fatal("a broken ledger was overwritten")
	}
}
