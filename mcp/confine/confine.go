// Package confine decides how a stdio MCP server is confined: by default
// it runs in the same sandbox as kin's commands (bubblewrap / Seatbelt,
// package agent/sandbox), reading the workspace, writing only its own state
// folder ($KIN_HOME/mcp-state/NAME for a global server, one per project
// for a project's: StateFolder; where its npm, uv and XDG caches are
// pointed) and its private temp, never seeing $KIN_HOME or the person's
// credentials (what the trust boundary hides from commands:
// boundary.Secrets.Hidden, never a list of this package's), with network.
// An entry's "sandbox" field widens or narrows that (more folders to
// write, no network, or "off"); it is part of the launch identity
// (config.Sandbox.Key, in trust.Hash) and shown on the launch approval.
//
// Where the sandbox cannot confine (no bubblewrap, a kernel without user
// namespaces, "sandbox": "off" in settings.json) a server runs unconfined
// as commands do, and the approval says so; where the person required the
// sandbox, it does not start.
//
// This package must never widen the command sandbox's policy for a server
// beyond what its entry says, nor keep a list of secret paths of its own.
package confine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/connect"
)

// Env is what a plan needs of kin.
type Env struct {
	Sandbox *sandbox.Sandbox // the command sandbox
	KinHome string
	// Workspace is the project folder: ${workspaceFolder} of "write".
	Workspace string
	// Home is the person's home folder ("~/" of "write"); "" asks the OS.
	Home string
}

// Plan is one stdio server's confinement.
type Plan struct {
	// Confine is nil when the server runs unconfined.
	Confine *connect.Confinement
	// Describe says it for the launch approval and kin mcp show.
	Describe string
	// Unconfined is set when the server runs unconfined, Refused when it
	// must not run at all (the person required a sandbox there is not).
	Unconfined, Refused bool
}

// StateFolder is the state folder of srv, a server of workspace: a global
// server's is StateDir; a project's (or an ACP client's) is its own for
// that project, $KIN_HOME/mcp-state/<scope>-<hash of the project>/NAME.
// Keyed on the name alone, a repository's server named like one of the
// person's global servers (or like another project's) shared its folder,
// where its npm cache lives: it could plant a package in npx's _npx
// install, which the global server (trusted, perhaps unconfined) ran the
// next time it started, elsewhere.
func StateFolder(kinHome, workspace string, srv config.Server) string {
	if srv.Scope == config.ScopeGlobal {
		return StateDir(kinHome, srv.Name)
	}
	sum := sha256.Sum256([]byte(string(srv.Scope) + "\x00" + boundary.RealPath(filepath.Clean(workspace))))
	return filepath.Join(kinHome, "mcp-state", safeName(string(srv.Scope))+"-"+hex.EncodeToString(sum[:6]), safeName(srv.Name))
}

// StateDir is a global server's state folder: $KIN_HOME/mcp-state/NAME, NAME made
// safe for a file name (and told apart by a digest when it had to be).
func StateDir(kinHome, name string) string {
	return filepath.Join(kinHome, "mcp-state", safeName(name))
}

var unsafe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]`) })

func safeName(name string) string {
	s := unsafe().ReplaceAllString(name, "_")
	if s != name || s == "." || s == ".." || s == "" || len(s) > 64 {
		sum := sha256.Sum256([]byte(name))
		if len(s) > 48 {
			s = s[:48]
		}
		s = strings.Trim(s, ".") + "-" + hex.EncodeToString(sum[:4])
	}
	return s
}

// For plans srv's confinement, launched in workdir running executable
// (both as the launch resolved them; "" when unknown).
func For(e Env, srv config.Server, workdir, executable string) Plan {
	setting := fmt.Sprintf(`the "sandbox" field of MCP server %s`, srv.Display().Name)
	if srv.Sandbox != nil && srv.Sandbox.Off {
		return Plan{Unconfined: true, Describe: `Unconfined on purpose ("sandbox": "off" in its entry): it can read and change everything you can, and reach the network.`}
	}
	sb := e.Sandbox
	if sb == nil {
		sb = sandbox.Default()
	}
	st := sb.Status()
	if !st.Confined {
		p := Plan{Unconfined: true, Refused: st.Refuses(),
			Describe: "No sandbox: " + st.Reason + ". This server runs unconfined: it can read and change everything you can, and reach the network."}
		if p.Refused {
			p.Describe = "No sandbox: " + st.Reason + `, and settings.json requires one ("sandbox": "required"): this server is not started.`
		}
		return p
	}
	state := StateFolder(e.KinHome, e.Workspace, srv)
	network := srv.Sandbox == nil || srv.Sandbox.Network == nil || *srv.Sandbox.Network
	writable := []string{state}
	var extra []string
	if srv.Sandbox != nil {
		for _, w := range srv.Sandbox.Write {
			if p := resolveWrite(w, e); p != "" {
				writable = append(writable, p)
				extra = append(extra, p)
			}
		}
	}
	hidden := append([]string(nil), sb.Config().Hidden...)
	hidden = append(hidden, boundary.NewSecrets(e.KinHome).Hidden()...)
	pol := sandbox.Policy{Writable: writable, Hidden: hidden, Network: network}
	// Where it starts and what it runs stay reachable even inside a hidden
	// folder (a global runner starts in $KIN_HOME/run/mcp) or the system's
	// temp folder (private to the sandbox): read-only. In the temp folder
	// a program needs more than its own file (a node_modules/.bin link, the
	// package it points into, that package's dependencies): the folder of
	// the temp folder it is in is shown whole, and no other.
	shown := map[string]bool{}
	show := func(p string) { // once: every entry is a mount
		if !shown[p] {
			shown[p] = true
			pol.ReadOnly = append(pol.ReadOnly, p)
		}
	}
	paths := []string{workdir}
	if executable != "" {
		paths = append(paths, executable, boundary.RealPath(executable))
	}
	for _, p := range paths {
		if p == "" || under(p, writable) {
			continue
		}
		if under(p, hidden) {
			show(p)
		} else if top := tempTop(p); top != "" {
			show(top)
		}
	}
	// So is the script an interpreter runs (`node /tmp/x/server.mjs`): an
	// argument naming an existing file in the temp folder shows its folder
	// there. Only there: an argument never uncovers a hidden folder. And
	// only a regular file (a script): the private temp folder is what keeps
	// the person's sockets out of reach (ssh-agent's /tmp/ssh-XXXX/agent.N,
	// tmux's /tmp/tmux-UID/default, whose send-keys runs anything outside
	// the sandbox, X11's /tmp/.X11-unix), and a read-only folder still lets
	// a socket in it be connected to, so an argument naming a socket or a
	// folder (a project entry's "${SSH_AUTH_SOCK}") shows nothing.
	for _, a := range srv.Args {
		if a == "" || strings.HasPrefix(a, "-") {
			continue
		}
		if !filepath.IsAbs(a) {
			if workdir == "" {
				continue
			}
			a = filepath.Join(workdir, a)
		}
		if fi, err := os.Stat(a); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		for _, p := range []string{a, boundary.RealPath(a)} {
			if top := tempTop(p); top != "" && !under(p, hidden) && !under(p, writable) {
				show(top)
			}
		}
	}
	conf := &connect.Confinement{
		Sandbox: sb,
		Policy:  pol,
		Env: map[string]string{
			"npm_config_cache": filepath.Join(state, "npm"),
			"UV_CACHE_DIR":     filepath.Join(state, "uv"),
			"XDG_CACHE_HOME":   filepath.Join(state, "cache"),
			"XDG_DATA_HOME":    filepath.Join(state, "data"),
			"XDG_STATE_HOME":   filepath.Join(state, "state"),
		},
		Setting: setting,
	}
	words := fmt.Sprintf("Sandboxed (%s): it reads your files but not kin's home or your credentials, writes only %s", st.Mechanism, state)
	for _, x := range extra {
		words += ", " + x
	}
	words += " and its own temp"
	if network {
		words += ", and reaches the network."
		if st.Note != "" {
			words += " And " + st.Note + "."
		}
	} else {
		words += ", and has no network."
	}
	return Plan{Confine: conf, Describe: words}
}

// Prepare makes the state folder (0700) before the server starts.
func (p Plan) Prepare() error {
	if p.Confine == nil || len(p.Confine.Policy.Writable) == 0 {
		return nil
	}
	return os.MkdirAll(p.Confine.Policy.Writable[0], 0o700)
}

func resolveWrite(w string, e Env) string {
	switch {
	case w == config.WorkspaceFolder || strings.HasPrefix(w, config.WorkspaceFolder+"/"):
		if e.Workspace == "" {
			return ""
		}
		return filepath.Join(e.Workspace, strings.TrimPrefix(w, config.WorkspaceFolder))
	case strings.HasPrefix(w, "~/"):
		home := e.Home
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		if home == "" {
			return ""
		}
		return filepath.Join(home, w[2:])
	case filepath.IsAbs(w):
		return filepath.Clean(w)
	}
	return ""
}

// tempTop is the folder directly in the system's temp folder that holds
// p ("" when p is not below it, or is the temp folder itself).
func tempTop(p string) string {
	for _, tmp := range []string{os.TempDir(), boundary.RealPath(os.TempDir())} {
		rel, err := filepath.Rel(tmp, p)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		return filepath.Join(tmp, first)
	}
	return ""
}

func under(p string, roots []string) bool {
	for _, r := range roots {
		if r == "" {
			continue
		}
		rel, err := filepath.Rel(r, p)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}
