package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fsmonitor is a git config that runs touch marker whenever git looks at
// the working tree (git status does; so does an editor's git integration).
func fsmonitor(marker string) string {
	return fmt.Sprintf("[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = \\\"touch %s\\\"\\n", marker)
}

// Finding 1 (issue 29): a confined command cannot make git run anything
// later, outside the sandbox: not by pointing .git/commondir at a config it
// plants, nor by writing .git/config, config.worktree, hooks (present or
// missing), a submodule's config, a nested repository's config, a .git of a
// submodule that is not checked out, or the git folder a symlinked .git
// points to. The session is in auto-edit with autoApproveSandboxedCommands:
// the commands run without asking (the sandbox is what holds). Judged by
// effect: after the turn, real git runs in every repository as the person
// would, and no planted command has run.
func TestHostileFinding01GitInternalsCannotRunCodeLater(t *testing.T) {
	h := newHostile(t)
	h.settings(`{"autoApproveSandboxedCommands": true}`)
	h.repo(h.ws)
	os.RemoveAll(filepath.Join(h.ws, ".git", "hooks")) // a missing hooks folder must not be creatable either
	h.write(h.ws, ".gitmodules", "[submodule \"dep\"]\n\tpath = third_party/dep\n\turl = https://example.com/dep.git\n")
	if err := os.MkdirAll(filepath.Join(h.ws, "third_party", "dep"), 0o755); err != nil {
		t.Fatal(err)
	}
	marker := func(name string) string { return filepath.Join(h.home, "ran-"+name) }
	// Each attack has a repository of its own (nested in the workspace,
	// so the nested ones are protected as such), so none hides another.
	attacks := map[string]string{
		// a config of its own, named by commondir
		"commondir": `cp -r .git ../planted-common; printf "` + fsmonitor(marker("commondir")) + `" > ../planted-common/config; echo "$(cd ..; pwd)/planted-common" > .git/commondir`,
		"config":    `printf "` + fsmonitor(marker("config")) + `" >> .git/config`,
		"worktree":  `git config extensions.worktreeConfig true; printf "` + fsmonitor(marker("worktree")) + `" > .git/config.worktree`,
		"hooks":     `mkdir -p .git/hooks; printf '#!/bin/sh\ntouch ` + marker("hooks") + `\n' > .git/hooks/post-commit; chmod +x .git/hooks/post-commit`,
		"modules":   `mkdir -p .git/modules/dep; cp -r .git/objects .git/refs .git/HEAD .git/modules/dep/; printf "` + fsmonitor(marker("modules")) + `" > .git/modules/dep/config`,
		"info":      `mkdir -p .git/info; printf '* diff=evil\n' > .git/info/attributes; printf '[diff "evil"]\n\ttextconv = "touch ` + marker("info") + `; cat"\n' >> .git/config`,
	}
	for name := range attacks {
		h.repo(filepath.Join(h.ws, "r-"+name))
	}
	// and two in the workspace's own repository: a hook where there is no
	// hooks folder, a .git planted for a submodule that is not checked out
	rootAttacks := map[string]string{
		"root-hooks": `mkdir -p .git/hooks; printf '#!/bin/sh\ntouch ` + marker("root-hooks") + `\n' > .git/hooks/post-commit; chmod +x .git/hooks/post-commit`,
		"submodule":  `cp -r .git ../planted-sub; printf "` + fsmonitor(marker("submodule")) + `" > ../planted-sub/config; echo "gitdir: $(cd ..; pwd)/planted-sub" > third_party/dep/.git`,
	}
	h.start("auto-edit")
	var script []string
	for name, cmd := range attacks {
		script = append(script, "echo "+name+"; ( cd r-"+name+" && "+cmd+" ) 2>&1")
	}
	for name, cmd := range rootAttacks {
		script = append(script, "echo "+name+"; ( "+cmd+" ) 2>&1")
	}
	out := h.unasked(script)
	if !strings.Contains(out, "Read-only file system") {
		t.Fatalf("the command was not confined as expected:\n%s", out)
	}
	// the person (or the editor) runs git, outside any sandbox
	for name := range attacks {
		dir := filepath.Join(h.ws, "r-"+name)
		h.git(dir, "status")
		h.write(dir, "x.txt", "x\n")
		h.git(dir, "add", "x.txt")
		h.git(dir, "diff", "--cached")
		h.git(dir, "commit", "-q", "-m", "after")
	}
	h.git(h.ws, "status")
	h.git(h.ws, "commit", "-q", "--allow-empty", "-m", "after")
	for name := range attacks {
		if exists(marker(name)) {
			t.Errorf("%s: the planted command ran outside the sandbox", name)
		}
	}
	for name := range rootAttacks {
		if exists(marker(name)) {
			t.Errorf("%s: the planted command ran outside the sandbox", name)
		}
	}
	for _, p := range []string{".git/commondir", ".git/hooks", ".git/modules", "third_party/dep/.git", "r-commondir/.git/commondir", "r-worktree/.git/config.worktree", "r-modules/.git/modules"} {
		if exists(filepath.Join(h.ws, p)) {
			t.Errorf("%s exists after the command (a placeholder left behind, or made by the command)", p)
		}
	}
	for _, name := range []string{"config", "worktree", "info"} {
		if b, _ := os.ReadFile(filepath.Join(h.ws, "r-"+name, ".git", "config")); strings.Contains(string(b), "touch") || strings.Contains(string(b), "worktreeConfig") {
			t.Errorf("r-%s/.git/config changed:\n%s", name, b)
		}
	}
	// git itself still works inside the sandbox, placeholders and all:
	// status shows none of them, add -A passes them by, commit works
	h.write(h.ws, "main.go", "package main\n")
	asked, calls := h.turn(nil, replies(bash("c2", "git status --short; echo ---; git add -A && git -c user.name=m -c user.email=m@x commit -qm add && git log --oneline | head -1"))...)
	out = fmt.Sprint(calls["c2"]["output"])
	if len(asked) != 0 || calls["c2"]["status"] != "completed" || !strings.Contains(out, "add") {
		t.Fatalf("git add and commit inside the sandbox: %v", calls["c2"])
	}
	status, _, _ := strings.Cut(out, "---")
	for _, p := range []string{".kin", ".vscode", "AGENTS.md", ".mcp.json"} {
		if strings.Contains(status, p) {
			t.Errorf("git status inside the sandbox lists the placeholder %s:\n%s", p, status)
		}
	}
}

// Finding 1, a .git that is a symlink: the git folder it points to is
// protected, and since the link itself cannot be pinned the command is
// asked (never allowed by the mode), saying why.
func TestHostileFinding01SymlinkedGitFailsClosed(t *testing.T) {
	h := newHostile(t)
	h.settings(`{"autoApproveSandboxedCommands": true}`)
	real := filepath.Join(h.ws, ".real-git")
	h.repo(h.ws)
	if err := os.Rename(filepath.Join(h.ws, ".git"), real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(h.ws, ".git")); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(h.home, "ran-symlinked")
	h.start("auto-edit")
	asked, calls := h.turn(allow, replies(bash("c1", `printf "`+fsmonitor(marker)+`" >> .git/config`))...)
	if len(asked) != 1 || !strings.Contains(fmt.Sprint(asked[0]["warning"]), "is a symlink") || asked[0]["alwaysAsk"] != true {
		t.Fatalf("a command in a workspace whose .git is a symlink was not asked with the reason: %v", asked)
	}
	if calls["c1"]["status"] != "failed" {
		t.Errorf("the write to the config .git points to: %v", calls["c1"])
	}
	h.git(h.ws, "status")
	if exists(marker) {
		t.Fatal("the planted command ran")
	}
}
