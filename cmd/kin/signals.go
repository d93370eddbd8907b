package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// signals are the signals a serving kin handles, set up beside its start
// rather than before it: os/signal enables each signal with a round trip
// to the runtime's signal thread, and SIGPIPE, SIGINT, SIGTERM and the
// reaper's SIGCHLD, one after another, took 0.2-0.3 ms of kin's own 1.5
// ms from main to the initialize answer on a 2-core VM.
type signals struct {
	// ready is closed once SIGPIPE is handled. Every write to stdout or
	// stderr waits for it (waitWriter): until then a write to a vanished
	// reader would kill kin with no teardown. kin starts nothing before
	// it answers the editor's first request, a write that waits.
	ready chan struct{}
	// armed is closed once SIGINT, SIGTERM and SIGHUP are handled too, a moment
	// later. Until then they end kin as they end any program.
	armed chan struct{}
	ints  chan os.Signal
}

// handleSignals starts handling them: SIGPIPE makes a write to a vanished
// reader fail with EPIPE instead of killing kin (a failed write is the
// editor leaving; the server tears down as for a closed stdin), and
// SIGINT, SIGTERM or SIGHUP ends ctx. SIGHUP too: an editor in a terminal
// (Neovim) runs kin in its own process group, which gets the hangup when
// the terminal closes, and its default action ended kin with no teardown,
// leaving its unconfined commands and what was below kin running. Notify, not Ignore, for SIGPIPE: an ignored
// signal stays ignored in the commands and MCP servers kin starts.
func handleSignals(parent context.Context) (ctx context.Context, s *signals, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	s = &signals{ready: make(chan struct{}), armed: make(chan struct{}), ints: make(chan os.Signal, 1)}
	go func() {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
		close(s.ready)
		signal.Notify(s.ints, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		close(s.armed)
		select {
		case <-s.ints:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, s, func() {
		cancel()
		<-s.armed // a Stop before the Notify would leave them handled
		signal.Stop(s.ints)
	}
}

// waitWriter is a write to stdout or stderr: it waits until SIGPIPE is
// handled (see signals.ready).
type waitWriter struct {
	w     io.Writer
	ready <-chan struct{}
}

func (w waitWriter) Write(p []byte) (int, error) {
	<-w.ready
	return w.w.Write(p)
}

// stdio is the editor's pipe pair.
type stdio struct{ ready <-chan struct{} }

func (s stdio) Read(p []byte) (int, error)  { return os.Stdin.Read(p) }
func (s stdio) Write(p []byte) (int, error) { return waitWriter{os.Stdout, s.ready}.Write(p) }
func (stdio) Close() error                  { return os.Stdin.Close() }
