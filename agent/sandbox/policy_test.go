package sandbox

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/boundary"
)

const isLinux = runtime.GOOS == "linux"

var update = flag.Bool("update", false, "rewrite golden files")

// example is a policy as kin makes it for a workspace on macOS: the
// workspace writable with its .git pinned and its hooks, config and .kin
// read-only, sandboxWritable, $KIN_HOME hidden but for the cache inside
// it, a credential folder and file hidden. One path has a quote and a
// parenthesis: paths are parameters, never profile text.
func example(network bool) resolved {
	return resolved{network: network, cache: "/Users/ana/.kin/cache/sandbox", entries: []entry{
		{path: "/Users/ana/.kin", kind: kindHidden, dir: true},
		{path: "/Users/ana/.ssh", kind: kindHidden, dir: true},
		{path: "/Users/ana/.netrc", kind: kindHidden},
		{path: "/Users/ana/src/app", kind: kindWritable, dir: true},
		{path: `/Users/ana/go/"weird") (allow default`, kind: kindWritable, dir: true},
		{path: "/Users/ana/src/app/.git", kind: kindWritable, dir: true},
		{path: "/Users/ana/src/app/.kin", kind: kindReadOnly, dir: true},
		{path: "/Users/ana/.kin/cache/sandbox", kind: kindWritable, dir: true},
		{path: "/Users/ana/src/app/.git/config", kind: kindReadOnly},
		{path: "/Users/ana/src/app/.git/hooks", kind: kindReadOnly, dir: true},
	}}
}

func TestSeatbeltProfileGolden(t *testing.T) {
	for _, c := range []struct {
		name    string
		network bool
	}{{"seatbelt.golden", false}, {"seatbelt-network.golden", true}} {
		args := seatbeltArgs(example(c.network), "/private/var/folders/xy/T/kin-cmd-1", []string{"/bin/bash", "-c", "go test ./..."})
		if args[0] != "-p" {
			t.Fatalf("args %q", args)
		}
		var b strings.Builder
		b.WriteString(args[1])
		b.WriteString("\n;; arguments after the profile:\n")
		for _, a := range args[2:] {
			b.WriteString(a + "\n")
		}
		got := []byte(b.String())
		path := filepath.Join("testdata", c.name)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./agent/sandbox -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s changed (if deliberate, go test ./agent/sandbox -update and review the diff):\n%s", c.name, got)
		}
	}
}

func TestSeatbeltProfileKeepsPathsOut(t *testing.T) {
	profile, params := seatbeltProfile(example(false), "/tmp/x")
	if strings.Contains(profile, "/Users/ana") || strings.Contains(profile, "weird") {
		t.Fatalf("a path is in the profile text:\n%s", profile)
	}
	if len(params) != 11 || params[4] != `WRITABLE_4=/Users/ana/go/"weird") (allow default` {
		t.Fatalf("params %q", params)
	}
	for _, must := range []string{
		"(deny default)",
		// the cache is carved out of the hidden $KIN_HOME
		`(deny file-read* file-write* (require-all (subpath (param "HIDDEN_0")) (require-not (subpath (param "WRITABLE_7")))))`,
		// the workspace minus its read-only parts (and not its own .git pin)
		`(allow file-write* (require-all (subpath (param "WRITABLE_3")) (require-not (subpath (param "READONLY_6"))) (require-not (literal (param "READONLY_8"))) (require-not (subpath (param "READONLY_9")))))`,
		`(allow file-write* (subpath (param "TMPDIR_0")))`,
	} {
		if !strings.Contains(profile, must) {
			t.Errorf("profile lacks %s:\n%s", must, profile)
		}
	}
	if strings.Contains(profile, "network-outbound") {
		t.Error("a network-less profile allows the network")
	}
}

func TestBwrapArgs(t *testing.T) {
	// what resolve would make: outermost first
	r := resolved{network: false, entries: []entry{
		{path: "/home/ana/.kin", kind: kindHidden, dir: true},
		{path: "/home/ana/.netrc", kind: kindHidden},
		{path: "/home/ana/src/app", kind: kindWritable, dir: true},
		{path: "/home/ana/.kin/cache", kind: kindWritable, dir: true},
		{path: "/home/ana/src/app/.git", kind: kindWritable, dir: true},
		{path: "/home/ana/src/app/.git/config", kind: kindReadOnly},
	}}
	got := strings.Join(bwrapArgs(r, true, "/home/ana/src/app", []string{"/bin/bash", "-c", "make"}), " ")
	want := "--unshare-all --unshare-user --disable-userns --cap-drop ALL --die-with-parent " +
		"--ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --tmpfs /run " +
		"--tmpfs /home/ana/.kin --ro-bind /dev/null /home/ana/.netrc " +
		"--bind /home/ana/src/app /home/ana/src/app --bind /home/ana/.kin/cache /home/ana/.kin/cache " +
		"--bind /home/ana/src/app/.git /home/ana/src/app/.git --ro-bind /home/ana/src/app/.git/config /home/ana/src/app/.git/config " +
		"--remount-ro /home/ana/.kin --chdir /home/ana/src/app -- /bin/bash -c make"
	if got != want {
		t.Fatalf("bwrap args\n got %s\nwant %s", got, want)
	}
	r.network, r.resolvDir = true, "/run/systemd/resolve"
	got = strings.Join(bwrapArgs(r, false, "/", []string{"true"}), " ")
	if !strings.HasPrefix(got, "--unshare-all --share-net --cap-drop ALL --die-with-parent ") ||
		!strings.Contains(got, "--tmpfs /run --ro-bind-try /run/systemd/resolve /run/systemd/resolve ") {
		t.Fatalf("with network, without user namespace options: %s", got)
	}
}

// TestBwrapArgsSkipCoveredMounts: a mount that shows the command what it
// sees already is left out (each one costs the command's start), and every
// mount that changes what it sees stays.
func TestBwrapArgsSkipCoveredMounts(t *testing.T) {
	r := resolved{entries: []entry{
		{path: "/etc/ssl", kind: kindReadOnly, dir: true},          // the root is read-only: covered
		{path: "/home/ana/.kin", kind: kindHidden, dir: true},      // hidden: kept
		{path: "/home/ana/src/app", kind: kindWritable, dir: true}, // writable: kept
		{path: "/tmp/tool", kind: kindReadOnly, dir: true},         // below the private /tmp: kept (it shows it)
		{path: "/home/ana/.kin/keys", kind: kindHidden, dir: true}, // inside a hidden folder: covered
		{path: "/home/ana/.kin/cache", kind: kindWritable, dir: true},
		{path: "/home/ana/src/app/.kin", kind: kindReadOnly, dir: true},       // inside a writable folder: kept
		{path: "/home/ana/src/app/AGENTS.md", kind: kindMissing},              // a placeholder: kept
		{path: "/home/ana/.kin/cache/creds", kind: kindHidden},                // inside a writable folder: kept
		{path: "/home/ana/src/app/.kin/rules", kind: kindReadOnly, dir: true}, // inside a read-only folder: covered
		{path: "/home/ana/src/app/.kin/rules/x", kind: kindWritable, dir: true},
	}, empty: "/e"}
	got := strings.Join(bwrapArgs(r, false, "/", []string{"true"}), " ")
	want := "--unshare-all --cap-drop ALL --die-with-parent " +
		"--ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --tmpfs /run " +
		"--tmpfs /home/ana/.kin --bind /home/ana/src/app /home/ana/src/app --ro-bind /tmp/tool /tmp/tool " +
		"--bind /home/ana/.kin/cache /home/ana/.kin/cache --ro-bind /home/ana/src/app/.kin /home/ana/src/app/.kin " +
		"--ro-bind /e /home/ana/src/app/AGENTS.md --ro-bind /dev/null /home/ana/.kin/cache/creds " +
		"--bind /home/ana/src/app/.kin/rules/x /home/ana/src/app/.kin/rules/x " +
		"--remount-ro /home/ana/.kin --chdir / -- true"
	if got != want {
		t.Fatalf("bwrap args\n got %s\nwant %s", got, want)
	}
}

func TestResolveOrdersAndDrops(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	ws := filepath.Join(root, "ws")
	link := filepath.Join(root, "link")
	mustMkdir(t, filepath.Join(ws, ".git", "hooks"))
	must(t, os.WriteFile(filepath.Join(ws, ".git", "config"), nil, 0o644))
	must(t, os.Symlink(ws, link))
	r := resolve(Policy{
		Writable: []string{link, filepath.Join(root, "missing"), "relative", filepath.Join(ws, ".git", "config")},
		ReadOnly: []string{filepath.Join(ws, ".git", "hooks"), filepath.Join(ws, ".git", "config")},
		Hidden:   []string{ws + "/.git/hooks/", filepath.Join(root, "gone")},
	}, true)
	var got []string
	for _, e := range r.entries {
		got = append(got, map[kind]string{kindWritable: "w", kindReadOnly: "r", kindHidden: "h"}[e.kind]+" "+strings.TrimPrefix(e.path, root))
	}
	// the symlink resolved, missing and relative paths and writable files
	// dropped, the stricter kind kept for a path named twice
	want := "w /ws|r /ws/.git/config|h /ws/.git/hooks"
	if strings.Join(got, "|") != want {
		t.Fatalf("entries %q, want %q", strings.Join(got, "|"), want)
	}
}

func TestPreparingMakesNoCacheFolder(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache", "sandbox")
	p := Policy{Cache: cache}
	if got := p.WritableFolders(); len(got) != 1 || got[0] != cache {
		t.Fatalf("writable %v", got)
	}
	if _, err := os.Stat(cache); err == nil {
		t.Fatal("listing the writable folders made the cache folder")
	}
	if r := resolve(p, true); r.cache != cache {
		t.Fatalf("resolved cache %q", r.cache)
	}
	if _, err := os.Stat(cache); err != nil {
		t.Fatal("the cache folder was not made for a command")
	}
}

// For assembles what the trust boundary computed (package boundary tests
// what it computes): the roots, the configured folders, the workspace's
// own cache and the pins writable, the rest as given.
func TestForPassesTheProtectionDown(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	ws := filepath.Join(root, "ws")
	mustMkdir(t, filepath.Join(ws, ".git"))
	prot := boundary.Protection{ReadOnly: []string{ws + "/.git/config"}, Missing: []string{ws + "/.kin"}, Pins: []string{ws + "/.git"}}
	sb := &Sandbox{cfg: Config{Writable: []string{"/extra"}, Hidden: []string{"/h"}, Cache: "/c"}}
	p := sb.For([]string{ws}, true, prot, []string{"/home/ana/.ssh"})
	if strings.Join(p.Writable, "|") != ws+"|/extra|"+ws+"/.git" || !p.Network ||
		strings.Join(p.Hidden, "|") != "/h|/home/ana/.ssh" || strings.Join(p.ReadOnly, "|") != ws+"/.git/config" || strings.Join(p.Missing, "|") != ws+"/.kin" {
		t.Fatalf("policy %+v", p)
	}
	// one cache folder per workspace
	if p.Cache != filepath.Join("/c", boundary.FolderID(ws)) || sb.CacheFor([]string{root}) == p.Cache {
		t.Fatalf("cache %q", p.Cache)
	}
}

// A path that must not be created is kept as a placeholder only where
// nothing read-only or hidden covers it, and becomes read-only when it
// exists by the time the command runs. One whose folder is gone since
// the walk (no/such/parent) gets its placeholder at the first missing
// folder inside the writable one (no): nothing of the path can be made.
func TestMissingEntries(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	mustMkdir(t, filepath.Join(ws, ".git", "worktrees"))
	must(t, os.WriteFile(filepath.Join(ws, "AGENTS.md"), nil, 0o644))
	r := resolve(Policy{Writable: []string{ws}, ReadOnly: []string{ws + "/.git/worktrees"},
		Missing: []string{ws + "/.kin", ws + "/.git/worktrees/x/config", ws + "/AGENTS.md", ws + "/no/such/parent/x"}}, false)
	var got []string
	for _, e := range r.entries {
		got = append(got, fmt.Sprintf("%s:%d", strings.TrimPrefix(e.path, ws), e.kind))
	}
	want := fmt.Sprintf(":%d|/.kin:%d|/AGENTS.md:%d|/no:%d|/.git/worktrees:%d", kindWritable, kindMissing, kindReadOnly, kindMissing, kindReadOnly)
	if strings.Join(got, "|") != want {
		t.Fatalf("entries %s, want %s", strings.Join(got, "|"), want)
	}
}

// A read-only path gone since the walk (the placeholder of a command that
// ended meanwhile, a file the person removed) is kept from being made
// again inside a writable folder, at its first missing component; outside
// every writable folder it is read-only anyway and left out.
func TestReadOnlyGoneSinceTheWalk(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	other, _ := filepath.EvalSymlinks(t.TempDir())
	mustMkdir(t, filepath.Join(ws, ".git"))
	r := resolve(Policy{Writable: []string{ws, ws + "/.git"}, ReadOnly: []string{ws + "/.git/info", ws + "/.claude/settings.json", other + "/gone"}}, false)
	var got []string
	for _, e := range r.entries {
		got = append(got, fmt.Sprintf("%s:%d", strings.TrimPrefix(e.path, ws), e.kind))
	}
	want := fmt.Sprintf(":%d|/.claude:%d|/.git:%d|/.git/info:%d", kindWritable, kindMissing, kindWritable, kindMissing)
	if strings.Join(got, "|") != want {
		t.Fatalf("entries %s, want %s", strings.Join(got, "|"), want)
	}
}

func TestParseModeAndStatusWords(t *testing.T) {
	for in, want := range map[string]Mode{"": ModeAuto, "auto": ModeAuto, "required": ModeRequired, "off": ModeOff} {
		if m, err := ParseMode(in); err != nil || m != want {
			t.Errorf("%q: %v %v", in, m, err)
		}
	}
	if _, err := ParseMode("of"); err == nil || !strings.Contains(err.Error(), `"auto", "required", "off"`) {
		t.Errorf("bad mode: %v", err)
	}

	off := New(Config{Mode: ModeOff}).Status()
	if off.Confined || off.Refuses() || off.Summary() != `Commands run unconfined: the sandbox is off in settings.json ("sandbox": "off").` {
		t.Errorf("off: %+v %q", off, off.Summary())
	}
	if _, _, err := New(Config{Mode: ModeOff}).Command(Policy{}, "/", nil, "true"); err != ErrUnconfined {
		t.Errorf("an off sandbox ran a command: %v", err)
	}
}

func TestRequiredWithoutBwrapRefuses(t *testing.T) {
	if !isLinux {
		t.Skip("bubblewrap is the Linux mechanism")
	}
	t.Setenv("PATH", t.TempDir()) // no bwrap on it
	st := New(Config{Mode: ModeRequired}).Status()
	if st.Confined || !st.Refuses() || st.Reason != "bubblewrap (bwrap) is not installed" {
		t.Fatalf("status %+v", st)
	}
	want := `Commands will not run: settings.json requires a sandbox ("sandbox": "required"), and bubblewrap (bwrap) is not installed. To confine them: install bubblewrap`
	if !strings.HasPrefix(st.Summary(), want) {
		t.Fatalf("summary %q", st.Summary())
	}
	auto := New(Config{Mode: ModeAuto}).Status()
	if auto.Confined || auto.Refuses() || !strings.HasPrefix(auto.Unconfined(), "No sandbox: bubblewrap (bwrap) is not installed. This command runs unconfined") {
		t.Fatalf("auto: %+v %q", auto, auto.Unconfined())
	}
}

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	must(t, os.MkdirAll(p, 0o755))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestFromSettings(t *testing.T) {
	home := t.TempDir()
	extra := t.TempDir()
	write := func(s string) {
		t.Helper()
		must(t, os.WriteFile(filepath.Join(home, "settings.json"), []byte(s), 0o600))
	}
	cfg := FromSettings(home)
	if cfg.Mode != ModeAuto || cfg.Problem != "" || cfg.Hidden[0] != home || cfg.Cache != filepath.Join(home, "cache", "sandbox") || cfg.AutoApprove {
		t.Fatalf("no file: %+v", cfg)
	}
	write(`{"sandbox":"off","sandboxWritable":["` + extra + `","rel/dir","/no/such/dir"],"autoApproveSandboxedCommands":true}`)
	cfg = FromSettings(home)
	if cfg.Mode != ModeOff || !cfg.AutoApprove || len(cfg.Writable) != 1 || cfg.Writable[0] != extra ||
		!strings.Contains(cfg.Problem, `"rel/dir" is not an absolute path`) || !strings.Contains(cfg.Problem, "/no/such/dir is not an existing folder") {
		t.Fatalf("settings: %+v", cfg)
	}
	write(`{"sandbox":"yes"}`)
	if cfg = FromSettings(home); cfg.Mode != ModeRequired || !strings.Contains(cfg.Problem, `"yes" is not one of`) {
		t.Fatalf("bad mode: %+v", cfg)
	}
	write(`{"sandbox":`)
	if cfg = FromSettings(home); cfg.Mode != ModeRequired || !strings.Contains(cfg.Problem, "not valid JSON") {
		t.Fatalf("bad file: %+v", cfg)
	}
}

// A mount goes with its folder when the folder is renamed: every folder
// between a writable folder and an entry inside it is pinned (bound onto
// itself, writable), so that a command cannot rename .github and make
// .github/workflows anew, nor a submodule's or nested repository's
// folder. Folders inside a read-only or hidden folder get no pin (it
// would make them writable), nor do folders outside every writable one,
// nor those above a file read-only only for its secret's name, or above a
// hidden path.
func TestBwrapPinsTheFoldersAboveProtectedPaths(t *testing.T) {
	r := resolved{entries: []entry{
		{path: "/home/ana/.kin", kind: kindHidden, dir: true},
		{path: "/ws", kind: kindWritable, dir: true},
		{path: "/home/ana/.kin/cache", kind: kindWritable, dir: true},
		{path: "/ws/.vscode", kind: kindReadOnly, dir: true},
		{path: "/ws/.github/workflows", kind: kindReadOnly, dir: true},
		{path: "/ws/a/b/.git", kind: kindWritable, dir: true},
		{path: "/ws/third/dep/.git", kind: kindMissing},
		{path: "/ws/.vscode/x/y", kind: kindHidden},
		{path: "/ws/a/b/.git/config", kind: kindReadOnly},
		{path: "/ws/a/b/.git/hooks/x/y", kind: kindMissing},
		{path: "/home/ana/.kin/cache/p/q/.vscode", kind: kindReadOnly, dir: true},
		{path: "/ws/svc/api/.env", kind: kindReadOnly},             // a secret's name only: no pin
		{path: "/ws/home/.config/gh", kind: kindHidden, dir: true}, // hidden: no pin
	}, empty: "/e"}
	got := strings.Join(bwrapArgs(r, false, "/", []string{"true"}), " ")
	for _, pin := range []string{"/ws/.github", "/ws/a", "/ws/a/b", "/ws/third", "/ws/third/dep",
		"/ws/a/b/.git/hooks", "/ws/a/b/.git/hooks/x", "/home/ana/.kin/cache/p", "/home/ana/.kin/cache/p/q"} {
		if !strings.Contains(got, " --bind "+pin+" "+pin+" ") {
			t.Errorf("%s is not pinned", pin)
		}
	}
	for _, not := range []string{"/ws/.vscode/x ", "/home/ana ", "/home ", "/ws/.github/workflows ", "/ws/svc ", "/ws/svc/api ", "/ws/home ", "/ws/home/.config "} {
		if strings.Contains(got, "--bind "+not) {
			t.Errorf("%s is bound writable", not)
		}
	}
	// outermost first: a pin before what it holds
	if strings.Index(got, "--bind /ws/a/b /ws/a/b") > strings.Index(got, "--bind /ws/a/b/.git /ws/a/b/.git") ||
		strings.Index(got, "--bind /ws/.github ") > strings.Index(got, "--ro-bind /ws/.github/workflows ") {
		t.Errorf("a pin comes after what it holds:\n%s", got)
	}
}
