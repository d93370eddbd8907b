//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kin-dev/kin/agent/reaper"
)

// bwrapMech confines commands with bubblewrap.
type bwrapMech struct {
	path   string // absolute
	userns bool   // --unshare-user --disable-userns work here
	// scoped says its commands start in the Landlock domain that keeps the
	// host's abstract unix sockets out of reach (scope_linux.go); unscoped
	// says why not, when not.
	scoped   bool
	unscoped string
}

func (b bwrapMech) name() string { return "bubblewrap" }

func (b bwrapMech) note() string { return b.unscoped }

// start starts a command of this mechanism in the scoped domain where the
// probe found that it works. Anything else (not bwrap: not confined) is
// started as it is, never in the domain: its no_new_privs would break
// sudo and the like.
func (b bwrapMech) start(cmd *exec.Cmd) error {
	if b.scoped && cmd.Path == b.path {
		return startScoped(cmd)
	}
	return cmd.Start()
}

func (b bwrapMech) command(r resolved, dir string, env, argv []string) (*exec.Cmd, func(), error) {
	cmd := exec.Command(b.path, bwrapArgs(r, b.userns, dir, argv)...)
	cmd.Dir = dir
	cmd.Env = setEnv(env, "TMPDIR", bwrapTmp)
	// A session of its own: the command has no controlling terminal to
	// push input into (TIOCSTI), and its process group is the session's.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd, func() {}, nil
}

// probes remembers, per bwrap path, whether it works: the probe runs once
// per process.
var probes struct {
	mu   sync.Mutex
	done map[string]probeResult
}

type probeResult struct {
	mech *bwrapMech
	why  unavailable
}

// expect looks for bwrap on PATH and starts nothing.
func expect(cfg Config) (string, unavailable) {
	if _, why := lookBwrap(cfg); why.reason != "" {
		return "", why
	}
	return bwrapMech{}.name(), unavailable{}
}

func lookBwrap(cfg Config) (string, unavailable) {
	prog := cfg.Bwrap
	if prog == "" {
		prog = "bwrap"
	}
	path, err := exec.LookPath(prog)
	if err != nil {
		return "", unavailable{reason: "bubblewrap (bwrap) is not installed", hint: "install bubblewrap (apt-get install bubblewrap, or your system's bubblewrap package)"}
	}
	return path, unavailable{}
}

func detect(cfg Config) (mechanism, unavailable) {
	path, why := lookBwrap(cfg)
	if why.reason != "" {
		return nil, why
	}
	probes.mu.Lock()
	defer probes.mu.Unlock()
	if probes.done == nil {
		probes.done = map[string]probeResult{}
	}
	res, ok := probes.done[path]
	if !ok {
		res = probe(path)
		probes.done[path] = res
	}
	if res.mech == nil {
		return nil, res.why
	}
	return *res.mech, unavailable{}
}

// probe runs `true` the way commands will run (all namespaces, network
// off), first with the user namespace options of bwrap 0.8, then without
// (older bwrap, or a setuid one where the kernel keeps user namespaces for
// root). Each is tried started on the scoped thread first (scope_linux.go)
// where nothing rules the scope out, then, should that fail, as it is: so
// the probe decides once whether commands start scoped, and costs one run
// where they do.
func probe(path string) probeResult {
	blocked := scopeBlocked(path)
	var last string
	for _, userns := range []bool{true, false} {
		why := blocked
		if why == "" {
			err := probeRun(path, userns, startScoped)
			if err == nil {
				return probeResult{mech: &bwrapMech{path: path, userns: userns, scoped: true}}
			}
			why = "bubblewrap does not work started under the scope: " + err.Error()
		}
		err := probeRun(path, userns, (*exec.Cmd).Start)
		if err == nil {
			return probeResult{mech: &bwrapMech{path: path, userns: userns, unscoped: unscopedNote(why)}}
		}
		last = err.Error()
	}
	return probeResult{why: unavailable{
		reason: fmt.Sprintf("bubblewrap (%s) cannot make a sandbox here (%s)", path, last),
		hint:   "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 or user.max_user_namespaces), or install a setuid bwrap",
	}}
}

// probeRun runs `true` under bwrap at path, started by start, and returns
// what bwrap said when it failed.
func probeRun(path string, userns bool, start func(*exec.Cmd) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	args := append(bwrapNamespaces(false, userns), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", bwrapTmp, "--", "true")
	cmd := exec.CommandContext(ctx, path, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// A group of its own, so what bubblewrap leaves to kin (its init,
	// exiting after bwrap reported) is reaped, not left a zombie.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	owner := reaper.NewOwner(false)
	err := start(cmd)
	if err == nil {
		owner.Started(cmd.Process)
		err = cmd.Wait()
		owner.EndGroup(time.Second)
	}
	if err == nil {
		return nil
	}
	if msg := strings.TrimSpace(stderr.String()); msg != "" {
		return errors.New(msg)
	}
	return err
}
