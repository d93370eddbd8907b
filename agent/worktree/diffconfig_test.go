package worktree

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// What a person meets: diff settings in their own ~/.gitconfig (or a
// repository's .git/config) shaped the patch worktree/apply makes with
// git diff and feeds to git apply. diff.noprefix = true (a common
// setting) wrote "diff --git src/new.txt src/new.txt", and git apply,
// stripping one folder as a patch's a/ and b/, created new.txt in the
// checkout's top folder instead of src/new.txt: the change landed in the
// wrong place, reported as applied. color.ui = always put colour codes in
// the patch, and every apply was refused as a conflict naming no path.
// apply.whitespace = fix changed the lines it applied (a trailing blank
// taken away), = error refused them.
func TestApplyIsNotShapedByDiffSettings(t *testing.T) {
	for name, config := range map[string]string{
		"noprefix":   "[diff]\n\tnoprefix = true\n",
		"color":      "[color]\n\tui = always\n\tdiff = always\n",
		"prefixes":   "[diff]\n\tsrcPrefix = x/y/\n\tdstPrefix = z/\n",
		"whitespace": "[apply]\n\twhitespace = fix\n",
		"wsError":    "[apply]\n\twhitespace = error\n",
	} {
		t.Run(name, func(t *testing.T) {
			gh := t.TempDir()
			t.Setenv("HOME", gh)
			t.Setenv("XDG_CONFIG_HOME", filepath.Join(gh, ".config"))
			if err := os.WriteFile(filepath.Join(gh, ".gitconfig"), []byte(config), 0o644); err != nil {
				t.Fatal(err)
			}
			dir, home, info := created(t)
			ctx := context.Background()
			write(t, filepath.Join(info.Path, "src", "new.txt"), "new\n")
			write(t, filepath.Join(info.Path, "a.txt"), "one\nTWO \nthree\n")
			if _, err := Apply(ctx, home, info); err != nil {
				t.Fatalf("apply: %v", err)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "src", "new.txt")); err != nil || string(b) != "new\n" {
				t.Errorf("src/new.txt in the checkout: %q, %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(dir, "new.txt")); err == nil {
				t.Error("the new file landed in the checkout's top folder")
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "one\nTWO \nthree\n" {
				t.Errorf("a.txt in the checkout: %q", b)
			}
		})
	}
}
