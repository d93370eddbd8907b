//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A command confined with network (--share-net) shares the host's network
// namespace, and with it the host's abstract unix sockets, which have no
// path for a private /tmp or /run to hide: X11's @/tmp/.X11-unix/X0 (XTEST
// types into the person's session), D-Bus buses, other local services.
// Landlock's scope (ABI 6, Linux 6.12) closes them: a process in a domain
// scoped with LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET cannot connect to an
// abstract socket made outside its domain, while the ones it (or anything
// in its domain) makes keep working.
//
// restrict_self applies to the calling thread and what it forks, and
// bubblewrap dies with that thread (--die-with-parent is a parent-death
// signal, sent when the forking thread exits). So one goroutine, locked to
// its thread for ever and restricted once (only the scope: no file system
// or network access is handled, so nothing else changes), starts every
// confined command; kin's other threads, and every unconfined command,
// stay outside the domain.

// scopeABI is the first Landlock ABI with LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET.
const scopeABI = 6

// landlockABI is the kernel's Landlock ABI version, 0 without Landlock (a
// variable for the tests of the fallback).
var landlockABI = func() int {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0
	}
	return int(v)
}

// startScoped starts cmd on the scoped spawner's thread (a variable for
// the tests of the fallback).
var startScoped = spawnerStart

type startReq struct {
	cmd  *exec.Cmd
	done chan error
}

// spawner is the one scoped thread of this process, made at its first use.
var spawner struct {
	once sync.Once
	reqs chan startReq
	err  error // why the thread could not be scoped
}

// spawnerStart runs cmd.Start on the spawner's thread and returns its
// answer. Only the fork happens there: os/exec's copying goroutines and
// Wait run wherever the caller's do.
func spawnerStart(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		reqs, ready := make(chan startReq), make(chan error)
		go spawnLoop(reqs, ready)
		if spawner.err = <-ready; spawner.err == nil {
			spawner.reqs = reqs
		}
	})
	if spawner.err != nil {
		return spawner.err
	}
	done := make(chan error, 1)
	spawner.reqs <- startReq{cmd: cmd, done: done}
	return <-done
}

// spawnLoop scopes its thread and then starts what it is sent, for ever.
// The thread is never unlocked: a goroutine that ends locked takes its
// thread with it (so a thread that could not be scoped, but may already
// have no_new_privs, is not handed back to the runtime), and while it
// lives the runtime never runs another goroutine on it, nor clones it for
// a new thread (a locked thread's new threads come from a clean template
// thread).
func spawnLoop(reqs <-chan startReq, ready chan<- error) {
	runtime.LockOSThread()
	if err := scopeThread(); err != nil {
		ready <- err
		return
	}
	ready <- nil
	for r := range reqs {
		r.done <- r.cmd.Start()
	}
}

// scopeThread puts the calling thread in a Landlock domain that only
// scopes abstract unix sockets. no_new_privs comes first: restrict_self
// requires it of a thread without CAP_SYS_ADMIN, and it is per thread.
func scopeThread() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	attr := unix.LandlockRulesetAttr{Scoped: unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", e)
	}
	defer unix.Close(int(fd))
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); e != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", e)
	}
	return nil
}

// unscopedNote is Status.Note for commands confined without the scope.
func unscopedNote(why string) string {
	return "abstract unix sockets are not scoped (" + why + "): a confined command with network can connect to services of this machine listening on them, such as X11 or D-Bus"
}

// scopeBlocked says why commands of the bwrap at path cannot start scoped
// whatever the probe finds ("" when the probe may try): a kernel without
// the scope, or a setuid bwrap (no_new_privs would take its privileges;
// so would it an AppArmor profile transition, which only a try finds).
func scopeBlocked(path string) string {
	if abi := landlockABI(); abi < scopeABI {
		if abi == 0 {
			return "the kernel has no Landlock; scoping them needs Landlock ABI 6, Linux 6.12"
		}
		return fmt.Sprintf("the kernel's Landlock ABI is %d; scoping them needs ABI 6, Linux 6.12", abi)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode()&os.ModeSetuid != 0 {
		return path + " is setuid, and the scope's no_new_privs would take its privileges"
	}
	return ""
}
