package connect

import (
	"errors"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/reaper"
	"github.com/kin-dev/kin/mcp/config"
)

// baseEnv are the only variables a stdio server inherits from kin.
var baseEnv = []string{"PATH", "HOME", "LANG"}

// Grace periods when stopping a stdio server: after stdin is closed, and
// after SIGTERM. SIGKILL follows.
var (
	stdinGrace = 500 * time.Millisecond
	termGrace  = 2 * time.Second
)

// process is a spawned stdio server: the leader of its own process group.
type process struct {
	cmd    *exec.Cmd
	owner  *reaper.Owner // what the server starts outside its group (setsid)
	stdin  *os.File      // our end: writes reach the server's stdin
	stdout *os.File      // our end: reads come from the server's stdout
	exited chan struct{}
	err    error // the leader's exit, valid after exited is closed
	// tail is the end of what the server wrote on stderr: never shown or
	// logged (it may hold anything), only searched for signs that the
	// sandbox refused it (confined).
	tail     *stderrTail
	confined bool
	stop     sync.Once
}

// childEnv is the environment of a stdio server: PATH, HOME and LANG from
// lookup (when set), then the configured variables over them.
func childEnv(lookup func(string) (string, bool), extra map[string]string) []string {
	m := map[string]string{}
	for _, k := range baseEnv {
		if v, ok := lookup(k); ok {
			m[k] = v
		}
	}
	for k, v := range extra {
		m[k] = v
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	env := make([]string, 0, len(keys))
	for _, k := range keys {
		env = append(env, k+"="+m[k])
	}
	return env
}

// spawn starts srv's command in a new process group with stdin and stdout
// on pipes and stderr kept only as a short tail (stderrTail), confined by
// conf when it is set.
func spawn(srv config.Server, workdir string, lookup func(string) (string, bool), conf *Confinement) (*process, error) {
	if conf != nil && conf.Refuse != "" {
		return nil, errors.New(conf.Refuse)
	}
	env := childEnv(lookup, srv.Env)
	if conf != nil {
		env = conf.env(env, srv.Env)
	}
	pathEnv := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v
		}
	}
	// the same resolution the launch's trust grant was computed with
	// (trust.LaunchOf): the child's PATH, relative names from workdir
	path, err := boundary.LookPath(srv.Command, pathEnv, workdir)
	if err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	var cmd *exec.Cmd
	cleanup := func() {}
	if conf != nil {
		// The same sandbox as commands (bubblewrap / Seatbelt): a session
		// and process group of its own, as below.
		cmd, cleanup, err = conf.Sandbox.Command(conf.Policy, workdir, env, append([]string{path}, srv.Args...)...)
		if err == nil {
			cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
		}
	} else {
		cmd = &exec.Cmd{
			Path:        path,
			Args:        append([]string{srv.Command}, srv.Args...),
			Env:         env,
			Dir:         workdir,
			Stdin:       inR,
			Stdout:      outW,
			Stderr:      errW,
			SysProcAttr: groupAttr(),
		}
	}
	if err == nil && conf != nil {
		err = conf.Sandbox.Start(cmd) // in the sandbox's scope (abstract sockets)
	} else if err == nil {
		err = cmd.Start()
	}
	// The child has its own copies now (or never will).
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		cleanup()
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, err
	}
	tail := newStderrTail()
	go tail.drain(errR)
	// Untagged: a stdio server gets only PATH, HOME, LANG and its own
	// variables; its processes are found by snapshots of its tree.
	owner := reaper.NewOwner(false)
	owner.Started(cmd.Process)
	p := &process{cmd: cmd, owner: owner, stdin: inW, stdout: outR, exited: make(chan struct{}), tail: tail, confined: conf != nil}
	go func() {
		p.err = cmd.Wait()
		cleanup()
		close(p.exited)
	}()
	return p, nil
}

// Pid is the process (and process group) id of the server.
func (p *process) Pid() int { return p.cmd.Process.Pid }

// Stop ends the server and everything in its process group: stdin is closed
// (the polite MCP shutdown), then the group gets SIGTERM, then SIGKILL. It
// returns once the leader is reaped and no member of the group is left (or
// the group could not be signalled any more), and what the server started
// outside its group (setsid) is stopped too.
func (p *process) Stop() {
	p.stop.Do(func() {
		// Before the server goes: then its children are re-parented and
		// no longer known to be its.
		p.owner.Snapshot()
		p.stdin.Close()
		leader := p.cmd.Process
		if !p.wait(stdinGrace) {
			signalGroup(leader, sigTerm)
			if !p.wait(termGrace) {
				signalGroup(leader, sigKill)
				<-p.exited
			}
		}
		// The leader is gone; children it left in the group may not be.
		if groupAlive(leader.Pid) {
			signalGroup(leader, sigTerm)
			deadline := time.Now().Add(termGrace)
			for groupAlive(leader.Pid) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			signalGroup(leader, sigKill)
		}
		p.owner.Stop(termGrace)
		p.stdout.Close()
	})
}

// wait waits up to d for the leader to exit.
func (p *process) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}
