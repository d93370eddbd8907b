// Package sandbox confines the commands kin runs for the model with the
// operating system's own mechanism: bubblewrap (bwrap) on Linux, Seatbelt
// (sandbox-exec) on macOS. A Policy says which folders a command may change,
// which paths it may not even read, and whether it may reach the network;
// a Sandbox turns that into the command line that enforces it, with a
// private temporary directory and a process tree that dies with it.
//
// Where no mechanism works (bwrap missing, a kernel without user
// namespaces, Windows) the Sandbox says so in its Status, once probed, and
// Command refuses: the caller decides, by mode, whether to run the command
// unconfined and must tell the person when it does.
//
// What to protect inside the writable folders (git's internals, the files
// that make things run later, secrets) is not this package's to decide: the
// trust boundary computes it once per command (boundary.Protection) and For
// passes it down; this package renders it, including read-only
// placeholders for what must not be created and the files it seeds.
//
// What this package must never do:
//
//   - Never fall back silently: Command never runs anything unconfined.
//   - Never leave a placeholder or a seeded file behind once no command of
//     any kin holds it (Config.RunDir) past the next settle point (Settle:
//     the next walk or Command, a turn's end, kin's exit), nor remove one
//     another command holds, including one whose walk saw it standing,
//     whichever kin process (sharing Config.RunDir) runs that command.
//     Only a kin stopped while holding the lock that orders this across
//     kins delays a removal: it stays recorded, for a later one.
//   - Never wait without bound for another kin: a command that cannot
//     have that lock within a bound does not run (LockError).
//   - Never widen a policy: a writable path that cannot be resolved is left
//     out; a hidden or read-only one always wins over a writable folder that
//     contains it.
//   - Never put a path into a profile or argument list unescaped: paths
//     reach sandbox-exec as parameters, and bwrap as separate arguments.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
)

// Mode is the person's choice in settings.json ("sandbox").
type Mode string

const (
	// ModeAuto confines commands where the system allows it and runs them
	// unconfined (saying so at start and on every approval) where not.
	ModeAuto Mode = "auto"
	// ModeRequired refuses to run a command that cannot be confined.
	ModeRequired Mode = "required"
	// ModeOff runs every command unconfined, on purpose.
	ModeOff Mode = "off"
)

// ParseMode reads the setting; "" is auto.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", ModeAuto:
		return ModeAuto, nil
	case ModeRequired, ModeOff:
		return Mode(s), nil
	}
	return ModeAuto, fmt.Errorf("\"sandbox\": %q is not one of \"auto\", \"required\", \"off\"", s)
}

// Config is what the person and kin ask of the sandbox.
type Config struct {
	Mode Mode
	// Writable are extra folders commands may change (sandboxWritable),
	// absolute.
	Writable []string
	// Hidden are paths no command may read: $KIN_HOME at least.
	Hidden []string
	// Cache is a folder of the sandbox's own where confined commands keep
	// tool caches (XDG_CACHE_HOME and GOCACHE point there), one folder
	// below it per workspace (CacheFor): writable to them, never used by
	// anything unconfined nor by another workspace's commands, so nothing
	// a confined command plants in a cache reaches a build outside it.
	// "" for none.
	Cache string
	// AutoApprove is autoApproveSandboxedCommands: the auto-edit mode may
	// run confined, network-less commands without asking.
	AutoApprove bool
	// Problem is a settings problem to report at start (a bad mode is read
	// as required, the strictest).
	Problem string
	// Bwrap names the bubblewrap program (default "bwrap", looked up on
	// PATH when the Sandbox is made). Linux only.
	Bwrap string
	// RunDir is a private folder where kin processes note the placeholders
	// their commands hold ($KIN_HOME/run/sandbox), so none removes one
	// another's command still needs (made, or bound as it stood); "" notes
	// them in this process only. Kins with different run folders (another
	// KIN_HOME) do not see each other's.
	RunDir string
}

// Status says what the sandbox does for commands, for the start-up notice,
// initialize and :checkhealth.
type Status struct {
	Mode Mode
	// Mechanism is "bubblewrap" or "seatbelt" when commands are confined.
	Mechanism string
	// Confined is true when commands run confined.
	Confined bool
	// Reason says why commands are not confined ("" when they are), and
	// Hint what would change that ("" when nothing obvious would).
	Reason string
	Hint   string
	// Note says what confined commands can still reach that the sandbox
	// would otherwise keep from them ("" when nothing): on Linux, the
	// host's abstract unix sockets, for commands with network, where
	// Landlock cannot scope them.
	Note string
	// Problem is a settings problem worth showing, if any.
	Problem string
}

// Refuses reports whether commands must not run at all: the person
// required a sandbox and there is none.
func (s Status) Refuses() bool { return s.Mode == ModeRequired && !s.Confined }

// Unconfined says, in words for an approval, that a command runs
// unconfined and why ("" when commands are confined).
func (s Status) Unconfined() string {
	if s.Confined {
		return ""
	}
	return "No sandbox: " + s.Reason + ". This command runs unconfined: it can read and change everything you can, and reach the network."
}

// Summary is the start-up message for a sandbox that does not confine
// commands, or confines them with a gap (Note); "" when it confines them
// fully.
func (s Status) Summary() string {
	if s.Confined {
		if s.Note == "" {
			return ""
		}
		return "Commands run confined (" + s.Mechanism + "), but " + s.Note + "."
	}
	msg := "Commands run unconfined: " + s.Reason + "."
	if s.Refuses() {
		msg = "Commands will not run: settings.json requires a sandbox (\"sandbox\": \"required\"), and " + s.Reason + "."
	}
	if s.Hint != "" {
		msg += " To confine them: " + s.Hint + "."
	}
	return msg
}

// Sandbox runs commands under one Config.
type Sandbox struct {
	cfg Config

	// The probe runs once, at the first Status or Command, never in New:
	// kin makes its Sandbox on the way to answering initialize, and an
	// editor must not wait for bubblewrap to start a namespace then.
	probeOnce sync.Once
	probed    atomic.Bool
	mech      mechanism // nil when commands cannot be confined
	status    Status

	// empty is the empty folder placeholders are bound from (emptyDir).
	emptyMu sync.Mutex
	empty   string
}

// emptyDir is an empty folder of kin's own, made once: $KIN_HOME's
// run/sandbox/empty, or one in the system's temporary folder without a
// RunDir. It is made again should something have put anything in it.
func (s *Sandbox) emptyDir() (string, error) {
	s.emptyMu.Lock()
	defer s.emptyMu.Unlock()
	if s.empty != "" {
		if entries, err := os.ReadDir(s.empty); err == nil && len(entries) == 0 {
			return s.empty, nil
		}
	}
	var dir string
	var err error
	if s.cfg.RunDir != "" {
		dir = filepath.Join(s.cfg.RunDir, "empty")
		if entries, rerr := os.ReadDir(dir); rerr == nil && len(entries) > 0 {
			os.RemoveAll(dir)
		}
		err = os.MkdirAll(dir, 0o700)
	} else {
		dir, err = os.MkdirTemp("", "kin-empty-")
	}
	if err != nil {
		return "", err
	}
	s.empty = dir
	return dir, nil
}

// unavailable says why there is no mechanism, and what would give one.
type unavailable struct{ reason, hint string }

// mechanism is one operating system's way of confining a command.
type mechanism interface {
	name() string
	// command returns the command running argv under p in dir, with env,
	// and what to remove once it ended.
	command(p resolved, dir string, env, argv []string) (*exec.Cmd, func(), error)
}

// New makes a Sandbox for cfg. It probes nothing: the system's mechanism is
// tried at the first Status or Command (once per process and program:
// later Sandboxes reuse the answer).
func New(cfg Config) *Sandbox {
	if cfg.Mode == "" {
		cfg.Mode = ModeAuto
	}
	// What a killed kin left of its commands' placeholders goes first, before
	// anything reads the workspace (one read of kin's run folder).
	Sweep(cfg.RunDir)
	s := &Sandbox{cfg: cfg, status: Status{Mode: cfg.Mode, Problem: cfg.Problem}}
	if cfg.Mode == ModeOff {
		s.status.Reason = `the sandbox is off in settings.json ("sandbox": "off")`
		s.probeOnce.Do(func() {})
		s.probed.Store(true)
	}
	return s
}

// probe tries the system's mechanism, once.
func (s *Sandbox) probe() {
	s.probeOnce.Do(func() {
		defer s.probed.Store(true)
		mech, why := detect(s.cfg)
		if mech == nil {
			s.status.Reason, s.status.Hint = why.reason, why.hint
			return
		}
		s.mech = mech
		s.status.Mechanism, s.status.Confined = mech.name(), true
		if n, ok := mech.(noter); ok {
			s.status.Note = n.note()
		}
	})
}

// Expected is the status without trying the mechanism: the probe's answer
// when it ran (probed true), else what kin expects from a look that starts
// nothing (on Linux, whether bwrap is on PATH). initialize reports it, so
// an editor never waits for the probe; a probe that then fails is said in
// the start-up notice and on every approval.
func (s *Sandbox) Expected() (st Status, probed bool) {
	if s.probed.Load() {
		return s.status, true
	}
	st = Status{Mode: s.cfg.Mode, Problem: s.cfg.Problem}
	name, why := expect(s.cfg)
	if name == "" {
		st.Reason, st.Hint = why.reason, why.hint
		return st, false
	}
	st.Mechanism, st.Confined = name, true
	return st, false
}

var (
	defaultOnce sync.Once
	defaultSB   *Sandbox
)

// Default is the sandbox for code that was given none: auto mode, hiding
// $KIN_HOME (or ~/.kin), with no cache folder. One per process.
func Default() *Sandbox {
	defaultOnce.Do(func() {
		home := os.Getenv("KIN_HOME")
		if home == "" {
			if h, err := os.UserHomeDir(); err == nil {
				home = filepath.Join(h, ".kin")
			}
		}
		var hidden []string
		if home != "" {
			hidden = []string{home}
		}
		defaultSB = New(Config{Mode: ModeAuto, Hidden: hidden})
	})
	return defaultSB
}

// Status reports what the sandbox does for commands, probing first if no
// call did yet.
func (s *Sandbox) Status() Status {
	s.probe()
	return s.status
}

// Config returns the configuration the sandbox was made with.
func (s *Sandbox) Config() Config { return s.cfg }

// ErrUnconfined is Command's answer when commands cannot be confined.
var ErrUnconfined = errors.New("sandbox: commands cannot be confined here")

// Command returns the command that runs argv (a program and its
// arguments) in dir confined by p, and a cleanup to call once it ended.
// env is the environment it gets, to which the sandbox adds TMPDIR (and the
// cache variables when there is a cache folder). The command is the leader
// of a new session and process group, so signalling the group reaches
// everything it starts that did not leave it; the sandbox's own process
// namespace (where there is one) takes the rest down when it ends.
func (s *Sandbox) Command(p Policy, dir string, env []string, argv ...string) (*exec.Cmd, func(), error) {
	return s.CommandContext(context.Background(), p, dir, env, argv...)
}

// CommandContext is Command for a command started on behalf of ctx (a
// turn): setting it up stops waiting for another kin's lock on the
// placeholders (a *LockError) once ctx ends. The command itself is not
// bound to ctx: its caller ends it.
func (s *Sandbox) CommandContext(ctx context.Context, p Policy, dir string, env []string, argv ...string) (*exec.Cmd, func(), error) {
	s.probe()
	if s.mech == nil {
		return nil, nil, ErrUnconfined
	}
	if len(argv) == 0 {
		return nil, nil, errors.New("sandbox: no command")
	}
	r, release, err := s.holdFor(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	if r.cache != "" {
		env = setEnv(env, "XDG_CACHE_HOME", r.cache)
		env = setEnv(env, "GOCACHE", filepath.Join(r.cache, "go-build"))
	}
	cmd, cleanup, err := s.mech.command(r, dir, env, argv)
	if err != nil {
		release()
		return nil, nil, err
	}
	return cmd, func() { cleanup(); release() }, nil
}

// holdFor resolves p for a command about to start and holds what it needs
// standing (its seeded files and placeholders, and what other commands of
// this process made that it binds as it is), returning the release. What
// ended commands held goes first (Settle), so the paths are resolved as
// they will stand; one that went between the resolution and the hold (a
// command ending at that moment) is resolved again: bound as it stood,
// bubblewrap would fail on it. Without the lock on kin's run folder
// (another kin seems stopped while holding it, or ctx ended) it holds
// nothing and returns a *LockError: the command does not run.
func (s *Sandbox) holdFor(ctx context.Context, p Policy) (resolved, func(), error) {
	for attempt := 1; ; attempt++ {
		Settle()
		q := p
		q.Seeded = reseed(p)
		q.ReadOnly = append([]string(nil), p.ReadOnly...)
		unseed, err := holdSeeds(ctx, q.Seeded, s.cfg.RunDir)
		if err != nil {
			return resolved{}, nil, err
		}
		for path := range q.Seeded {
			q.ReadOnly = append(q.ReadOnly, path) // written now: kept as it is
		}
		r := resolve(q, true)
		if q.Cache != "" && r.cache == "" {
			unseed()
			return r, nil, fmt.Errorf("sandbox: the cache folder %s cannot be made", q.Cache)
		}
		if r.empty, err = s.emptyDir(); err != nil {
			unseed()
			return r, nil, fmt.Errorf("sandbox: no empty folder for placeholders: %v", err)
		}
		release, standing, err := holdPlaceholders(ctx, r, s.cfg.RunDir)
		if err != nil {
			unseed()
			return r, nil, err
		}
		both := func() { release(); unseed() }
		if standing && seedsBound(r, q.ReadOnly) {
			return r, both, nil
		}
		both()
		if attempt == 3 {
			return r, nil, errors.New("sandbox: what protects the workspace kept changing while the command was set up (other commands ending), so it did not run")
		}
	}
}

// seedsBound reports whether every file of readOnly this process seeds is
// an entry of r: one gone by the resolution is left out of it (not made a
// placeholder, see resolve), and is seeded again on the next try.
func seedsBound(r resolved, readOnly []string) bool {
	for _, ro := range readOnly {
		if !seededHere(ro) {
			continue
		}
		real, _, ok := realPath(ro)
		if !ok {
			return false
		}
		found := false
		for _, e := range r.entries {
			if e.kind == kindReadOnly && e.path == real {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// setEnv replaces or adds name=value in env.
func setEnv(env []string, name, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != name {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}
