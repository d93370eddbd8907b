package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bubblewrap protects a path with a mount over it (read-only, or a
// placeholder where it is missing), and a mount goes with its folder when
// that folder is renamed. A confined command that renames the folder
// above a protected path carries the protection away with it and makes
// the path anew: a CI workflow in .github/workflows, a .git for the
// submodule a repository records (git status then runs its fsmonitor
// outside the sandbox), a nested repository's .git with a config of its
// own. Run unasked (auto-edit, autoApproveSandboxedCommands); judged by
// what is on disk after, and by git run as the person would.
func TestHostileRenamingTheFolderAboveAProtectedPath(t *testing.T) {
	h := newHostile(t)
	h.settings(`{"autoApproveSandboxedCommands": true}`)
	h.repo(h.ws)
	h.write(h.ws, ".github/workflows/ci.yml", "on: push\n")
	head := strings.TrimSpace(h.git(h.ws, "rev-parse", "HEAD"))
	h.git(h.ws, "update-index", "--add", "--cacheinfo", "160000,"+head+",third_party/dep")
	h.git(h.ws, "add", ".github")
	h.git(h.ws, "commit", "-q", "-m", "a workflow and a submodule")
	if err := os.MkdirAll(filepath.Join(h.ws, "third_party", "dep"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.repo(filepath.Join(h.ws, "tools", "nested"))
	marker := func(name string) string { return filepath.Join(h.home, "ran-"+name) }
	attacks := map[string]string{
		"workflow": `mv .github .github-old && mkdir -p .github/workflows && echo evil > .github/workflows/evil.yml`,
		"submodule": `cp -r .git planted && rm -rf planted/commondir planted/config.worktree planted/gitdir planted/modules && git config -f planted/config core.fsmonitor "touch ` + marker("submodule") + `" && ` +
			`mv third_party third_party-old && mkdir -p third_party/dep && echo "gitdir: $PWD/planted" > third_party/dep/.git`,
		"nested": `mv tools tools-old && mkdir -p tools/nested && cp -r tools-old/nested/.git tools/nested/.git && rm -rf tools/nested/.git/commondir && git config -f tools/nested/.git/config core.fsmonitor "touch ` + marker("nested") + `"`,
	}
	h.start("auto-edit")
	var script []string
	for name, cmd := range attacks {
		script = append(script, "echo "+name+"; ( "+cmd+" ) 2>&1")
	}
	out := h.unasked(script)
	h.git(h.ws, "status")
	h.git(filepath.Join(h.ws, "tools", "nested"), "status")
	if exists(filepath.Join(h.ws, ".github", "workflows", "evil.yml")) {
		t.Errorf("workflow: the command made .github/workflows/evil.yml")
	}
	for _, name := range []string{"submodule", "nested"} {
		if exists(marker(name)) {
			t.Errorf("%s: the planted command ran outside the sandbox", name)
		}
	}
	for _, p := range []string{".github-old", "third_party-old", "tools-old"} {
		if exists(filepath.Join(h.ws, p)) {
			t.Errorf("%s exists: the command moved a protected path's folder aside", p)
		}
	}
	if t.Failed() {
		t.Logf("the command's output:\n%s", out)
	}
}
