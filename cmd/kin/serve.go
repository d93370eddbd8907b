package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/reaper"
	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/cmd/kin/peeruid"
	"github.com/kin-dev/kin/rpc"
)

func runServe(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "serve on this loopback TCP address instead of stdio (e.g. 127.0.0.1:7777)")
	logFile := fs.String("log-file", "", "write logs to this file (default: stderr)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	traceFile := fs.String("trace", "", "write every JSON-RPC message in and out to this file, secrets masked")
	anyUser := fs.Bool("any-local-user", false, "with --listen on a system where kin cannot tell which local user connects (all but Linux): listen anyway, and let every local user drive kin as you")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, sigs, log, trace, done, ok := startProcess(*logFile, *logLevel, *traceFile, stderr)
	if !ok {
		return 2
	}
	defer done()
	opts := serverOptions(log, trace)
	if *listen == "" {
		return rpc.Serve(ctx, stdio{sigs.ready}, opts)
	}
	return serveTCP(ctx, *listen, *anyUser, opts, stderr)
}

// serverOptions is everything a connection needs, for stdio and TCP alike.
func serverOptions(log *zap.Logger, trace io.Writer) rpc.Options {
	cwd, _ := os.Getwd()
	home := kinHome()
	// One sandbox per process: its probe runs once, and every connection
	// reports and uses the same answer.
	sb := sandbox.New(sandbox.FromSettings(home))
	return rpc.Options{
		Home:    home,
		Getenv:  os.Getenv,
		Cwd:     cwd,
		Version: version,
		Logger:  log,
		Trace:   trace,
		Tools: func(roots []string) []tool.Tool {
			return builtin.Tools(builtin.Options{Sandbox: sb, KinHome: home})
		},
		Sandbox: sb,
		MCP:     &rpc.MCPOptions{},
	}
}

// serveTCP accepts editors on a loopback address only, and on Linux from
// the user kin runs as only, in kin's own user and pid namespaces
// (peeruid.Check): the protocol has no authentication, so anything else
// would hand the workspace to the network, to the machine's other users, or
// to a command kin confined with network, which could then add an MCP
// server that runs unconfined. Where the peer cannot be checked, kin
// does not listen unless anyUser says every local user may connect: a
// careful user who moves to a Mac expects the same port to stay theirs,
// not to become silently open.
func serveTCP(ctx context.Context, addr string, anyUser bool, opts rpc.Options, stderr io.Writer) int {
	if err := checkLoopback(addr); err != nil {
		fmt.Fprintf(stderr, "kin: --listen %s: %v\n", addr, err)
		return 2
	}
	if !peeruid.Supported && !anyUser {
		fmt.Fprintf(stderr, "kin: --listen: on %s kin cannot tell which local user connects, so every one of them could drive kin as you; pass --any-local-user to listen anyway\n", runtime.GOOS)
		return 2
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "kin: %v\n", err)
		return 1
	}
	defer ln.Close()
	fmt.Fprintf(stderr, "kin: listening on %s\n", ln.Addr())
	if !peeruid.Supported {
		opts.Logger.Warn("kin serve --listen: this system does not tell kin who connects; every local user can use the port (--any-local-user)", zap.String("addr", ln.Addr().String()))
	}
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			return 0
		}
		// Checked before anything is read, off the accept loop so a slow
		// /proc does not hold up the next editor.
		go func() {
			if err := peeruid.Check(c); err != nil && !(anyUser && errors.Is(err, errors.ErrUnsupported)) {
				opts.Logger.Warn("kin serve --listen: closed a connection unread: only the user kin runs as may use the port",
					zap.String("peer", c.RemoteAddr().String()), zap.Error(err))
				c.Close()
				return
			}
			rpc.Serve(ctx, c, opts)
		}()
	}
}

func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("only loopback addresses are allowed (127.0.0.1, ::1 or localhost)")
	}
	return nil
}

// startProcess handles the signals a serving command handles (ctx ends
// with SIGINT, SIGTERM or SIGHUP; see handleSignals), opens the log and the trace
// it was asked for, and makes kin the reaper of what its commands and
// servers orphan (setsid, double forks), so it stops them with their owner.
// done stops whatever is left and closes the files; ok is false when a
// flag was wrong (said on stderr).
func startProcess(logFile, logLevel, traceFile string, stderr io.Writer) (ctx context.Context, sigs *signals, log *zap.Logger, trace io.Writer, done func(), ok bool) {
	ctx, sigs, stop := handleSignals(context.Background())
	log, closeLog, err := newLogger(logFile, logLevel, waitWriter{stderr, sigs.ready})
	if err != nil {
		fmt.Fprintf(stderr, "kin: %v\n", err)
		stop()
		return nil, nil, nil, nil, nil, false
	}
	var traceOut *os.File
	if traceFile != "" {
		traceOut, err = openPrivate(traceFile)
		if err != nil {
			fmt.Fprintf(stderr, "kin: --trace: %v\n", err)
			closeLog()
			stop()
			return nil, nil, nil, nil, nil, false
		}
		trace = traceOut
	}
	if err := reaper.Enable(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		log.Warn("kin cannot adopt orphaned processes; those that leave their process group may outlive kin", zap.Error(err))
	}
	return ctx, sigs, log, trace, func() {
		stop()
		reaper.Shutdown(2 * time.Second)
		if traceOut != nil {
			traceOut.Close()
		}
		closeLog()
	}, true
}

// newLogger logs to a file or stderr, never stdout (stdout is the protocol).
func newLogger(path, level string, stderr io.Writer) (*zap.Logger, func(), error) {
	var lvl zapcore.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	var ws zapcore.WriteSyncer = zapcore.AddSync(stderr)
	closeFn := func() {}
	if path != "" {
		f, err := openPrivate(path)
		if err != nil {
			return nil, nil, fmt.Errorf("--log-file: %v", err)
		}
		ws = zapcore.AddSync(f)
		closeFn = func() { f.Close() }
	}
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	log := zap.New(zapcore.NewCore(enc, zapcore.Lock(ws), lvl))
	return log, func() { _ = log.Sync(); closeFn() }, nil
}

// openPrivate opens a trace or log file to append to it, readable by the
// person alone (README: the trace is "a 0600 file"). A file that already
// exists keeps its mode through O_CREATE: one made by touch (0644), or put
// in /tmp by another user (0666), would let other local users read what
// tools read and the model wrote. A regular file is narrowed to 0600, and
// one kin cannot narrow (another user's) is refused; a pipe or terminal
// named on purpose (/dev/stderr) is left as it is.
func openPrivate(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm() != 0o600 {
		if err = f.Chmod(0o600); err != nil {
			err = fmt.Errorf("%s is readable by others and kin cannot make it private: %w", path, err)
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
