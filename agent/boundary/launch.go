package boundary

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// runners are programs that run a package they resolve from the working
// folder first (a repository's own node_modules/.bin, pyproject, go.mod)
// and only then from a registry: by program, the subcommands that do so
// ("" for the program itself).
var runners = map[string][]string{
	"npx": {""}, "pnpx": {""}, "bunx": {""}, "uvx": {""},
	"npm": {"exec", "x"}, "pnpm": {"dlx", "exec"}, "yarn": {"dlx", "exec"}, "bun": {"x"},
	"uv": {"run", "tool"}, "pipx": {"run"}, "deno": {"run"}, "go": {"run"},
}

// PackageRunner reports whether a launch (command and args) runs a package
// through a runner such as npx, uvx or bunx, which would take a working
// folder's own copy of the package over the registry's. A global server
// launched that way starts in LaunchFolder, outside every workspace.
func PackageRunner(command string, args []string) bool {
	base := strings.ToLower(filepath.Base(command))
	for _, ext := range []string{".cmd", ".exe", ".bat", ".ps1"} {
		base = strings.TrimSuffix(base, ext)
	}
	subs, ok := runners[base]
	if !ok {
		return false
	}
	sub := ""
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			sub = a
			break
		}
	}
	for _, s := range subs {
		if s == "" || s == sub {
			return true
		}
	}
	return false
}

// LaunchFolder is the working folder of global MCP servers launched
// through a package runner: $KIN_HOME/run/mcp, empty, made 0700.
func LaunchFolder(kinHome string) (string, error) {
	if kinHome == "" {
		kinHome = DefaultKinHome()
	}
	dir := filepath.Join(kinHome, "run", "mcp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return dir, nil
}

// LookPath finds a program as exec would, with the PATH the program will
// get (pathEnv) and relative names taken from dir: a name with a slash is
// relative to dir, a relative PATH entry too.
func LookPath(name, pathEnv, dir string) (string, error) {
	if strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator) {
		if !filepath.IsAbs(name) && dir != "" {
			name = filepath.Join(dir, name)
		}
		return name, nil // exec reports a missing or unrunnable file
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) && dir != "" {
			d = filepath.Join(dir, d)
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH", name)
}

// Digest identifies a file's content: "sha256:<hex>".
func Digest(path string) (string, error) {
	f, err := Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// Scripts are the files inside project that a launch runs, by real path,
// with their digests: the executable when it is there, and every argument
// that names a regular file there (sh ./srv.sh, node server.js), relative
// to dir; a path there that is a symlink out of project counts, by its
// target. A trust grant binds to them, so a repository that copies a
// trusted launch line runs its own script only after asking.
func Scripts(executable string, args []string, dir, project string) map[string]string {
	if project == "" {
		return nil
	}
	named := filepath.Clean(project)
	project = RealPath(project)
	out := map[string]string{}
	add := func(p string) {
		if p == "" {
			return
		}
		if !filepath.IsAbs(p) {
			if dir == "" {
				return
			}
			p = filepath.Join(dir, p)
		}
		p = filepath.Clean(p)
		real := RealPath(p)
		// A path the project names is the project's whatever its target:
		// a symlink the repository put there (.claude/hooks/guard.sh ->
		// ../../tools/guard.sh, a script beside a subfolder kin was opened
		// in) runs what the repository chose, so its target is digested
		// too. Only a path that is outside by its own words is left out.
		if !Within(project, real) && !Within(project, p) && !Within(named, p) {
			return
		}
		if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() {
			return
		}
		if d, err := Digest(real); err == nil {
			out[real] = d
		}
	}
	add(executable)
	for _, a := range args {
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			a = v // --script=./x.js
		}
		add(a)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
