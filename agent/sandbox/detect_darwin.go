//go:build darwin

package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// seatbeltMech confines commands with sandbox-exec.
type seatbeltMech struct{}

func (seatbeltMech) name() string { return "seatbelt" }

func (seatbeltMech) command(r resolved, dir string, env, argv []string) (*exec.Cmd, func(), error) {
	// Seatbelt has no private mounts: the temporary directory is a fresh
	// host folder per command, removed when it ends.
	base, err := filepath.EvalSymlinks(os.TempDir()) // /var/folders/... is /private/var/folders/...
	if err != nil {
		base = os.TempDir()
	}
	tmp, err := os.MkdirTemp(base, "kin-cmd-")
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(sandboxExec, seatbeltArgs(r, tmp, argv)...)
	cmd.Dir = dir
	cmd.Env = setEnv(env, "TMPDIR", tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd, func() { _ = os.RemoveAll(tmp) }, nil
}

var probeOnce struct {
	sync.Once
	reason string
}

func detect(Config) (mechanism, unavailable) {
	probeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := exec.CommandContext(ctx, sandboxExec, "-p", "(version 1)(allow default)", "/usr/bin/true").Run(); err != nil {
			probeOnce.reason = sandboxExec + " does not work here (" + err.Error() + ")"
		}
	})
	if probeOnce.reason != "" {
		return nil, unavailable{reason: probeOnce.reason}
	}
	return seatbeltMech{}, unavailable{}
}

// expect: sandbox-exec is part of macOS; the probe says whether it works.
func expect(Config) (string, unavailable) { return seatbeltMech{}.name(), unavailable{} }
