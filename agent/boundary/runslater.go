package boundary

import (
	"strings"
)

// later is one kind of file that makes something run later, outside any
// sandbox, when a person or a tool of theirs opens the project.
type later struct {
	// path is slash-separated: a name, or names (.github/workflows).
	path string
	// dir: a folder (everything below it counts); else a file.
	dir bool
	// top: only at the top of a workspace folder counts for the sandbox's
	// placeholders (every depth counts for edits).
	top bool
	why string
}

// runsLater is the one list of files that make things run later. The
// sandbox keeps what exists of it read-only to commands and makes what is
// missing impossible to create (Protect); the auto-edit mode always asks
// before kin's tools write any of it (RunsLater). .git is listed whole for
// edits; for commands it is protected by an allow-list (see gitWritable).
var runsLater = []later{
	{path: ".git", dir: true, why: "git's own files (config and hooks decide what git runs)"},
	{path: ".kin", dir: true, top: true, why: "kin's project config (which MCP servers start)"},
	{path: ".mcp.json", top: true, why: "other agents' MCP servers (what they start)"},
	{path: ".claude", dir: true, top: true, why: "Claude Code's settings and hooks"},
	{path: ".agents", dir: true, top: true, why: "the repository's agent skills (instructions and scripts coding agents load)"},
	{path: ".vscode", dir: true, top: true, why: "VS Code's tasks, launch configurations and settings"},
	{path: ".idea", dir: true, top: true, why: "JetBrains IDEs' run configurations"},
	{path: ".github/workflows", dir: true, top: true, why: "CI workflows"},
	{path: ".husky", dir: true, top: true, why: "git hooks (husky)"},
	// the hooks pre-commit installed in .git/hooks run what this file
	// lists (any command, "language: system") at every git commit
	{path: ".pre-commit-config.yaml", top: true, why: "git hooks (pre-commit: what runs at every commit)"},
	{path: ".gitmodules", top: true, why: "submodules (what git fetches and enters)"},
	{path: ".envrc", top: true, why: "direnv runs it when a shell enters the folder"},
	{path: "AGENTS.md", top: true, why: "instructions for coding agents"},
	{path: "CLAUDE.md", top: true, why: "instructions for coding agents"},
	{path: "authorized_keys", why: "who may log in over ssh"},
	{path: "known_hosts", why: "which hosts ssh trusts"},
}

// runsLaterSplit are runsLater's paths lowercased and taken apart once:
// RunsLater runs for every entry of the walk before a confined command,
// and splitting them at every call was a fifth of a first walk's time.
var runsLaterSplit = func() [][]string {
	out := make([][]string, len(runsLater))
	for i, l := range runsLater {
		out[i] = strings.Split(strings.ToLower(l.path), "/")
	}
	return out
}()

// RunsLater says why writing the slash-separated path (relative to a
// workspace folder; any depth counts) makes something run later outside
// kin's sandbox, or "". Names are compared case-insensitively (macOS and
// Windows file systems are).
func RunsLater(p string) string { return runsLaterElems(elemsOf(p)) }

// elemsOf is slash-separated path p lowercased and taken apart, nil for
// none: what RunsLater and SecretName compare (the walk takes an entry's
// path apart once for both).
func elemsOf(p string) []string {
	p = strings.ToLower(strings.Trim(p, "/"))
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// runsLaterElems is RunsLater of a path taken apart (elemsOf).
func runsLaterElems(elems []string) string {
	if len(elems) == 0 {
		return ""
	}
	for i, l := range runsLater {
		want := runsLaterSplit[i]
		if l.dir {
			// the folder, or anything below it; a file of that name too (a
			// worktree's .git file)
			for i := 0; i+len(want) <= len(elems); i++ {
				if hasElems(elems[i:i+len(want)], want, true) {
					return l.path + ": " + l.why
				}
			}
			continue
		}
		if hasElems(elems, want, true) {
			return l.path + ": " + l.why
		}
	}
	return ""
}
