package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kin-dev/kin/agent/files"
)

func TestSessionFilesPassEveryWriteThroughBeforeWrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.txt")
	if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var seen []files.Change
	asked := ""
	svc := New(Options{
		Home:  t.TempDir(),
		Files: func(id string) files.Access { asked = id; return files.Disk{} },
		BeforeWrite: func(_ context.Context, c files.Change) error {
			seen = append(seen, c)
			return nil
		},
	})
	fa := svc.Files("s_1")
	if asked != "s_1" {
		t.Errorf("the front end was asked for session %q", asked)
	}
	if _, err := fa.Write(context.Background(), files.Change{Path: p, Old: []byte("old\n"), Existed: true, New: []byte("new\n"), SessionID: "s_1", TurnID: "t_1"}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || string(seen[0].Old) != "old\n" || seen[0].TurnID != "t_1" {
		t.Fatalf("BeforeWrite saw %+v", seen)
	}
	// Without a front end's Access, the disk (with the turns' checkpoints).
	if c, ok := New(Options{Home: t.TempDir()}).Files("s").(checkpointed); !ok || c.Access != (files.Disk{}) {
		t.Errorf("no Files option is not the disk: %T", New(Options{Home: t.TempDir()}).Files("s"))
	}
}
