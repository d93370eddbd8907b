package gitx_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kin-dev/kin/agent/gitx"
	"github.com/kin-dev/kin/agent/gitx/gitxtest"
)

// The attack: a caller puts a setting before the command ("-c k=v diff",
// as gitxtest.Git does): withDiffFlags looked only at args[0], so the
// diff went without --no-ext-diff and the repository's diff.external
// ran. An option that picks another repository or work tree (-C,
// --git-dir, --work-tree) would make git read a configuration kin never
// looked at: it is refused.
func TestOptionsBeforeTheCommandKeepTheRules(t *testing.T) {
	repo, ran := hostile(t)
	ctx := context.Background()
	for _, args := range [][]string{
		{"-c", "color.ui=never", "diff"},
		{"-c", "color.ui=never", "-c", "core.quotePath=false", "diff", "HEAD"},
		{"-c", "color.ui=never", "status", "--porcelain"},
	} {
		if _, err := gitx.Output(ctx, repo, args...); err != nil {
			t.Errorf("git %v: %v", args, err)
		}
	}
	for _, name := range gitxtest.Ran(t, ran) {
		t.Errorf("the repository's %s ran", name)
	}
	other := filepath.Dir(repo)
	for _, args := range [][]string{
		{"-C", repo, "diff"},
		{"--git-dir=" + filepath.Join(repo, ".git"), "diff"},
		{"--work-tree", repo, "diff"},
		{"-c", "color.ui=never", "--no-pager", "diff"},
	} {
		if _, err := gitx.Output(ctx, other, args...); err == nil {
			t.Errorf("git %v was run", args)
		}
	}
	for _, name := range gitxtest.Ran(t, ran) {
		t.Errorf("the repository's %s ran", name)
	}
}
