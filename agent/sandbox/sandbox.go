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
// What this package must never do:
//
//   - Never fall back silently: Command never runs anything unconfined.
//   - Never widen a policy: a writable path that cannot be resolved is left
//     out; a hidden or read-only one always wins over a writable folder that
//     contains it.
//   - Never put a path into a profile or argument list unescaped: paths
//     reach sandbox-exec as parameters, and bwrap as separate arguments.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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
	// tool caches (XDG_CACHE_HOME and GOCACHE point there): writable to
	// them, never used by anything unconfined, so nothing a confined
	// command plants in a cache reaches a build outside. "" for none.
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
// commands ("" when it does).
func (s Status) Summary() string {
	if s.Confined {
		return ""
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
	cfg    Config
	mech   mechanism // nil when commands cannot be confined
	status Status
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

// New makes a Sandbox for cfg, probing the system's mechanism (once per
// process and program: later calls reuse the answer).
func New(cfg Config) *Sandbox {
	if cfg.Mode == "" {
		cfg.Mode = ModeAuto
	}
	s := &Sandbox{cfg: cfg, status: Status{Mode: cfg.Mode, Problem: cfg.Problem}}
	if cfg.Mode == ModeOff {
		s.status.Reason = `the sandbox is off in settings.json ("sandbox": "off")`
		return s
	}
	mech, why := detect(cfg)
	if mech == nil {
		s.status.Reason, s.status.Hint = why.reason, why.hint
		return s
	}
	s.mech = mech
	s.status.Mechanism, s.status.Confined = mech.name(), true
	return s
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

// Status reports what the sandbox does for commands.
func (s *Sandbox) Status() Status { return s.status }

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
	if s.mech == nil {
		return nil, nil, ErrUnconfined
	}
	if len(argv) == 0 {
		return nil, nil, errors.New("sandbox: no command")
	}
	r := resolve(p, true)
	if p.Cache != "" && r.cache == "" {
		return nil, nil, fmt.Errorf("sandbox: the cache folder %s cannot be made", p.Cache)
	}
	if r.cache != "" {
		env = setEnv(env, "XDG_CACHE_HOME", r.cache)
		env = setEnv(env, "GOCACHE", filepath.Join(r.cache, "go-build"))
	}
	return s.mech.command(r, dir, env, argv)
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
