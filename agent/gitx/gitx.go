// Package gitx runs git on a repository someone else supplied, without
// letting that repository choose what runs.
//
// A repository's own configuration (.git/config, its includes, a linked
// worktree's config.worktree) can name programs git starts on its own:
// core.fsmonitor on every status, hooks on checkout (in the hooks folder,
// or configured: hook.<name>.command, git 2.54), a pager, an external
// diff, textconv and filter drivers selected by the tree's .gitattributes.
// Opening a hostile repository must never run them (agent/boundary's rule:
// nothing a repository brings runs before the person trusted it, and git
// plumbing kin runs for itself is not something the person approved).
//
// Every command therefore gets, at command-line precedence (GIT_CONFIG_COUNT,
// which beats every file):
//   - the fixed keys below switched off, and
//   - every driver key the repository's own configuration defines
//     (filter.*, diff.*.textconv/command, merge.*.driver, hook.*.command
//     and hook.*.event, remote.*.uploadpack/receivepack) and every
//     protocol.*.allow replaced by a harmless one.
//
// A repository whose own configuration includes another file is refused
// (ErrIncludes): git would read that file again after kin's look.
//
// A git that runs for more than a moment is watched, and one that waits
// for good on a file (opening or reading a FIFO named .gitignore or
// .gitattributes, or in its git folder) is stopped, naming it
// (ErrWaitsOnFIFO, stall.go); a git that is merely slow runs on.
//
// The person's global configuration is theirs and is kept (their name for
// commits, their git-lfs filters), except for the fixed keys. What is not
// covered: a git binary on PATH that is itself hostile; git add in a
// repository with a checked-out submodule (git add has no flag that keeps
// it from running git status inside, which reads the submodule's own
// configuration: a caller passes submodules by, as worktree's snapshot
// does); and a repository whose tree relies on its filters (git-lfs
// configured only in the repository's config) checks out raw pointer
// files in a worktree.
package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// fixed are the keys switched off for every command, whoever set them.
var fixed = [][2]string{
	{"core.fsmonitor", "false"},
	{"core.hooksPath", os.DevNull},
	{"core.pager", "cat"},
	{"core.editor", "false"},
	{"sequence.editor", "false"},
	{"core.askPass", ""},
	{"core.sshCommand", "false"},
	// core.gitProxy is the one key here whose first value wins, so the
	// repository's beats this (the person's, read before it, is kept):
	// what holds the repository's is git:// never being allowed, below
	{"core.gitProxy", ""},
	{"credential.helper", ""},
	// the programs that check a signature (git log and show do when
	// log.showSignature is set), one per format: gpg.program sets the
	// OpenPGP one only, and the repository's x509 or ssh one ran. No
	// signature is checked unasked either: git writes the commit to the
	// program, and one that exits first (false) kills git with SIGPIPE.
	{"log.showSignature", "false"},
	{"gpg.program", "false"},
	{"gpg.openpgp.program", "false"},
	{"gpg.x509.program", "false"},
	{"gpg.ssh.program", "false"},
	{"gpg.ssh.defaultKeyCommand", "false"},
	// no transport at all: a repository that calls itself a partial clone
	// fetches a missing object from its "promisor" remote the moment a
	// diff or checkout needs it, unasked, and an ext:: URL is a shell
	// command. protocol.<name>.allow beats protocol.allow, so each known
	// one is switched off too (and the repository's own, by neutral).
	{"protocol.allow", "never"},
	{"protocol.ext.allow", "never"},
	{"protocol.file.allow", "never"},
	{"protocol.git.allow", "never"},
	{"protocol.ssh.allow", "never"},
	{"protocol.http.allow", "never"},
	{"protocol.https.allow", "never"},
	{"submodule.recurse", "false"},
	{"core.untrackedCache", "false"},
}

// Error is a git command that failed, with what git said.
type Error struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" || errors.Is(e.Err, ErrWaitsOnFIFO) {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrNoGit is returned when no git is installed.
var ErrNoGit = errors.New("git is not installed (kin needs it for this)")

// Command is git with args in dir, under this package's rules. The caller
// may set Stdin/Stdout/Stderr before running it.
func Command(ctx context.Context, dir string, args ...string) (*exec.Cmd, error) {
	bin, err := exec.LookPath("git")
	if err != nil {
		return nil, ErrNoGit
	}
	if _, err := commandAt(args); err != nil {
		return nil, &Error{Args: args, Err: err}
	}
	drivers, err := repoDrivers(ctx, bin, dir)
	if err != nil {
		return nil, &Error{Args: args, Err: err}
	}
	afterList(dir)
	pairs := append(append([][2]string(nil), fixed...), drivers...)
	cmd := exec.CommandContext(ctx, bin, withDiffFlags(args)...)
	cmd.Dir = dir
	cmd.Env = env(pairs)
	inGroup(cmd)
	return cmd, nil
}

// Output runs git and returns its stdout; a failure is an *Error with
// git's stderr.
func Output(ctx context.Context, dir string, args ...string) (string, error) {
	cmd, err := Command(ctx, dir, args...)
	if err != nil {
		return "", err
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := run(cmd); err != nil {
		return out.String(), &Error{Args: args, Stderr: errb.String(), Err: err}
	}
	return out.String(), nil
}

// Input is what RunWith gives git besides its arguments.
type Input struct {
	// Index is a temporary index file (GIT_INDEX_FILE): the one variable
	// a caller may set, so a snapshot of a work tree leaves its own index
	// alone. Every other GIT_* variable would undo this package's rules.
	Index string
	// Stdin is what git reads (a patch for git apply).
	Stdin io.Reader
	// Stdout, when set, takes what git writes (RunWith then returns ""):
	// a patch as large as a worktree's files goes to a file, not memory.
	Stdout io.Writer
}

// RunWith is Output with in's index and stdin.
func RunWith(ctx context.Context, dir string, in Input, args ...string) (string, error) {
	cmd, err := Command(ctx, dir, args...)
	if err != nil {
		return "", err
	}
	if in.Index != "" {
		if !filepath.IsAbs(in.Index) {
			return "", fmt.Errorf("gitx: the index %q is not an absolute path", in.Index)
		}
		cmd.Env = append(cmd.Env, "GIT_INDEX_FILE="+in.Index)
	}
	cmd.Stdin = in.Stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if in.Stdout != nil {
		cmd.Stdout = in.Stdout
	}
	if err := run(cmd); err != nil {
		return out.String(), &Error{Args: args, Stderr: errb.String(), Err: err}
	}
	return out.String(), nil
}

// ExitCode is the exit status of a git command that ran and failed (-1
// when err is not one).
func ExitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// Toplevel is the root of the work tree dir belongs to.
func Toplevel(ctx context.Context, dir string) (string, error) {
	out, err := Output(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", err
	}
	return filepath.Clean(strings.TrimSpace(out)), nil
}

// InTree reports whether dir is inside a git work tree.
func InTree(ctx context.Context, dir string) bool {
	out, err := Output(ctx, dir, "rev-parse", "--is-inside-work-tree")
	return err == nil && strings.TrimSpace(out) == "true"
}

// withDiffFlags adds --no-ext-diff and --no-textconv to the commands that
// print diffs (after the command's name, which may follow -c settings): an external diff (diff.external, or a driver's command) can
// only be switched off by flag, and kin parses git's own diff.
//
// Those commands and status also get --ignore-submodules=dirty: to say
// whether a checked-out submodule is dirty, git runs git status inside
// it, a child that reads the submodule's own configuration (its filter
// drivers), which repoDrivers, reading the top repository's, never saw.
// A submodule's commit changing is still shown; only its work tree is not
// looked into. The flag beats submodule.<name>.ignore, which the
// repository could set.
func withDiffFlags(args []string) []string {
	i, err := commandAt(args)
	if err != nil || i == len(args) {
		return args
	}
	var flags []string
	switch args[i] {
	case "diff", "log", "show":
		flags = []string{"--no-ext-diff", "--no-textconv", "--ignore-submodules=dirty"}
	case "status":
		flags = []string{"--ignore-submodules=dirty"}
	default:
		return args
	}
	return append(append(append([]string(nil), args[:i+1]...), flags...), args[i+1:]...)
}

// commandAt is the index of the git command in args: only settings
// ("-c key=value") may come before it. Any other option there could pick
// another repository or work tree (-C, --git-dir, --work-tree), whose
// configuration repoDrivers never looked at, or undo a rule.
func commandAt(args []string) (int, error) {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		if args[i] != "-c" || i+1 == len(args) {
			return 0, fmt.Errorf("gitx: the option %q before the git command is not allowed (only -c key=value is)", args[i])
		}
		i += 2
	}
	return i, nil
}

// env is kin's environment for git: no GIT_* variable of kin's own
// environment (a GIT_DIR or GIT_CONFIG_* there would redirect or undo
// the rules), a PATH of absolute folders only (absolutePath), no
// prompts, no optional locks (status must not rewrite the repository's
// index), no lazy fetch of a partial clone's missing objects (git 2.44
// and later; older ones are held by the protocol keys), untranslated
// messages, and pairs as command-line configuration.
func env(pairs [][2]string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "LC_ALL=") || strings.HasPrefix(kv, "LANGUAGE=") {
			continue
		}
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			kv = "PATH=" + absolutePath(v)
		}
		out = append(out, kv)
	}
	out = append(out, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_PAGER=cat", "GIT_NO_LAZY_FETCH=1",
		"GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C", "LANGUAGE=C")
	out = append(out, "GIT_CONFIG_COUNT="+strconv.Itoa(len(pairs)))
	for i, p := range pairs {
		n := strconv.Itoa(i)
		out = append(out, "GIT_CONFIG_KEY_"+n+"="+p[0], "GIT_CONFIG_VALUE_"+n+"="+p[1])
	}
	return out
}

// absolutePath is a PATH value without its empty or relative entries:
// git takes those, as a shell does, from the folder it runs in, the work
// tree's top, where a repository may bring a program named like the ones
// the keys above are given (cat, false, true).
func absolutePath(path string) string {
	var keep []string
	for _, dir := range filepath.SplitList(path) {
		if filepath.IsAbs(dir) {
			keep = append(keep, dir)
		}
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}

// repoDrivers lists the program-naming keys the repository's own
// configuration (local and worktree scope: git says which key is from
// where, and reads a config.worktree only when the repository names
// extensions.worktreeConfig) defines, each with a harmless value, or
// refuses an include there (ErrIncludes). Reading configuration runs
// nothing.
//
// The files are listed without their includes, so an include is refused
// whatever its file holds at the look. A look that fails is the
// command's error: git reads the same configuration when it starts and
// would fail the same way, unless the file it failed on (an included
// one that did not parse) was rewritten meanwhile, and then git would
// run with keys no look saw. Outside a repository the look lists the
// person's configuration only, and succeeds. A configuration git waits
// on for good (ErrWaitsOnFIFO) is named at once.
func repoDrivers(ctx context.Context, bin, dir string) ([][2]string, error) {
	cmd := exec.CommandContext(ctx, bin, "config", "--list", "--no-includes", "--show-scope", "--name-only")
	cmd.Dir = dir
	cmd.Env = env(fixed)
	inGroup(cmd)
	var b, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &errb
	if err := run(cmd); err != nil {
		if errors.Is(err, ErrWaitsOnFIFO) {
			return nil, err
		}
		return nil, fmt.Errorf("reading the repository's configuration: %s (%w)", strings.TrimSpace(errb.String()), err)
	}
	var out [][2]string
	for _, line := range strings.Split(b.String(), "\n") {
		scope, key, ok := strings.Cut(line, "\t")
		if !ok || scope != "local" && scope != "worktree" {
			continue // the person's own, or kin's
		}
		name := strings.TrimSpace(key)
		if includeKey(name) {
			return nil, fmt.Errorf("%w (%s, in the %s configuration)", ErrIncludes, name, scope)
		}
		if v, ok := neutral(name); ok {
			out = append(out, [2]string{key, v})
		}
	}
	return out, nil
}

// ErrIncludes is a repository whose own configuration includes another
// file. The overrides above are made from a look at the configuration
// just before git starts, and git reads it again itself: a file the
// configuration includes that a command can write (one in the work
// tree, or in the git folder's writable objects, refs, logs...) can be
// given a filter or diff driver between the two, which then runs. No
// command-line setting switches includes off, the per-name driver keys
// cannot all be overridden without knowing their names, and git always
// reads the repository's configuration from its git folder, so no
// snapshot can stand in for it: git is not run there at all. Whether a
// file is writable to a command is the sandbox's to say, not this
// package's, so every include is refused (the repository's own
// .git/config and config.worktree are read-only to commands; the
// person's global configuration may include what it likes).
var ErrIncludes = errors.New("kin does not run git in a repository whose own configuration includes another file: a command could rewrite that file between kin's look at the configuration and git's read of it; remove the include from the repository's .git/config (git config --local --unset-all include.path) or move its settings there")

// includeKey reports whether a configuration key includes a file.
func includeKey(key string) bool {
	lower := strings.ToLower(key)
	if lower == "include.path" {
		return true
	}
	section, rest, ok := strings.Cut(lower, ".")
	return ok && section == "includeif" && strings.HasSuffix(rest, ".path")
}

// afterList is a test's hook: it runs between repoDrivers' look at the
// configuration and git's own read of it.
var afterList = func(string) {}

// neutral is the harmless value for a key that names a program: filters
// pass content through unchanged, textconv and external diff commands are
// neutral (kin adds --no-ext-diff --no-textconv too), a merge driver always
// reports a conflict, no protocol is allowed, a remote's upload-pack or
// receive-pack program fails, a configured hook fires on no event.
func neutral(key string) (string, bool) {
	lower := strings.ToLower(key)
	section, rest, ok := strings.Cut(lower, ".")
	if !ok {
		return "", false
	}
	i := strings.LastIndex(rest, ".")
	if i < 0 {
		return "", false
	}
	name := rest[i+1:]
	switch {
	case section == "filter" && (name == "clean" || name == "smudge"):
		return "cat", true
	case section == "filter" && name == "process":
		return "", true
	case section == "filter" && name == "required":
		return "false", true
	case section == "diff" && name == "textconv":
		return "cat", true
	case section == "diff" && name == "command":
		return "false", true
	case section == "merge" && name == "driver":
		return "false", true
	case section == "protocol" && name == "allow":
		return "never", true
	case section == "remote" && (name == "uploadpack" || name == "receivepack"):
		return "false", true
	// git 2.54's configured hooks ("hook.<name>.command" run on each
	// "hook.<name>.event"): core.hooksPath switches off only the hooks
	// folder, not these. An empty event clears the events the name was
	// given; the command left, should a global event still name it, is
	// one that does nothing.
	case section == "hook" && name == "event":
		return "", true
	case section == "hook" && name == "command":
		return "true", true
	}
	return "", false
}
