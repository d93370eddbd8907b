//go:build linux

package sandbox

import (
	"bytes"
	"context"
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
}

func (b bwrapMech) name() string { return "bubblewrap" }

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
// root).
func probe(path string) probeResult {
	var last string
	for _, userns := range []bool{true, false} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		args := append(bwrapNamespaces(false, userns), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", bwrapTmp, "--", "true")
		cmd := exec.CommandContext(ctx, path, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		// A group of its own, so what bubblewrap leaves to kin (its init,
		// exiting after bwrap reported) is reaped, not left a zombie.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		owner := reaper.NewOwner(false)
		err := cmd.Start()
		if err == nil {
			owner.Started(cmd.Process)
			err = cmd.Wait()
			owner.EndGroup(time.Second)
		}
		cancel()
		if err == nil {
			return probeResult{mech: &bwrapMech{path: path, userns: userns}}
		}
		last = strings.TrimSpace(stderr.String())
		if last == "" {
			last = err.Error()
		}
	}
	return probeResult{why: unavailable{
		reason: fmt.Sprintf("bubblewrap (%s) cannot make a sandbox here (%s)", path, last),
		hint:   "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 or user.max_user_namespaces), or install a setuid bwrap",
	}}
}
