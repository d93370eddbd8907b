package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/mcp/config"
)

// Launch is what a trust grant binds to: which server, where it runs and
// what it runs. Two equal Keys are the same launch.
type Launch struct {
	Name  string       `json:"name"`
	Scope config.Scope `json:"scope"`
	// Project is the project folder (real path) of a project's or an ACP
	// client's server; "" for a global one.
	Project string `json:"project,omitempty"`
	// Hash is Hash(server): transport, command, args, url, env.
	Hash      string           `json:"hash"`
	Transport config.Transport `json:"transport"`
	// Executable is the program a stdio server runs, found on its PATH and
	// with symlinks resolved ("" for http, or when it is not found).
	Executable string `json:"executable,omitempty"`
	// Workdir is the folder a stdio server starts in.
	Workdir string `json:"workdir,omitempty"`
	// Scripts are the files inside the workspace folder it runs (its
	// program, the files its arguments name), by real path, with digests.
	Scripts map[string]string `json:"scripts,omitempty"`
	// Display is the masked launch line (never part of the key).
	Display string `json:"-"`
}

// ProjectProgram is the project's file a bare command (command, as the
// entry writes it: no '/') runs when PATH finds it inside the project (the
// entry env's PATH, or a relative entry of the person's, such as
// "node_modules/.bin"): the repository's file, which the launch line
// alone reads as a program of the system. "" otherwise. The launch
// approval and `kin mcp get` both name it.
func (l Launch) ProjectProgram(command string) string {
	if _, inProject := l.Scripts[l.Executable]; inProject && l.Executable != "" && !strings.ContainsRune(command, '/') {
		return l.Executable
	}
	return ""
}

// Key identifies the launch: "launch:sha256:<hex>" over every field but
// Display.
func (l Launch) Key() string {
	data, err := json.Marshal(l)
	if err != nil { // cannot happen for strings and string maps
		panic(err)
	}
	sum := sha256.Sum256(data)
	return "launch:sha256:" + hex.EncodeToString(sum[:])
}

// LaunchOf is the launch of s in the workspace folder workdir, with PATH
// and the other variables from lookup (nil: none): a global stdio server
// that runs a package (npx, uvx, bunx...) starts in
// boundary.LaunchFolder(kinHome), outside every workspace, so the runner
// never picks up a repository's own copy of the package; every other stdio
// server starts in workdir.
func LaunchOf(s config.Server, workdir, kinHome string, lookup func(string) (string, bool)) Launch {
	l := Launch{Name: s.Name, Scope: s.Scope, Hash: Hash(s), Transport: s.Transport, Display: s.Display().Launch}
	if workdir != "" {
		workdir = boundary.RealPath(filepath.Clean(workdir))
	}
	if s.Scope != config.ScopeGlobal {
		l.Project = workdir
	}
	if s.Transport != config.TransportStdio {
		return l
	}
	l.Workdir = workdir
	if s.Scope == config.ScopeGlobal && boundary.PackageRunner(s.Command, s.Args) {
		if dir, err := boundary.LaunchFolder(kinHome); err == nil {
			l.Workdir = dir
		}
	}
	path := s.Env["PATH"]
	if _, set := s.Env["PATH"]; !set && lookup != nil {
		path, _ = lookup("PATH")
	}
	if exe, err := boundary.LookPath(s.Command, path, l.Workdir); err == nil {
		l.Executable = boundary.RealPath(filepath.Clean(exe))
	}
	l.Scripts = boundary.Scripts(l.Executable, append(slices.Clone(s.Args), envWords(s.Env)...), l.Workdir, workdir)
	return l
}

// envWords are the words of the server's env values (split at spaces and
// colons), for boundary.Scripts to find the project's files among: a file
// the launch's own env makes it run (NODE_OPTIONS="--require ./hook.js",
// LD_PRELOAD=./x.so) is run as surely as one its arguments name, so a
// grant binds to its content too, and a changed hook asks again.
func envWords(env map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, strings.FieldsFunc(env[k], func(r rune) bool { return r == ':' || unicode.IsSpace(r) })...)
	}
	return out
}
