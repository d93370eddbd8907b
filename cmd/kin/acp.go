package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/reaper"
	"github.com/kin-dev/kin/rpc/acp"
)

// runACP serves the Agent Client Protocol on stdio for editors that speak
// it (Zed, JetBrains, Emacs agent-shell, CodeCompanion, avante.nvim). It is
// kin serve's agent behind another wire: the same options, tools, sandbox
// and MCP servers. `kin acp login` is `kin login`: an ACP client runs its
// terminal sign-in as the configured command with the method's args added.
func runACP(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("acp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	logFile := fs.String("log-file", "", "write logs to this file (default: stderr)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	traceFile := fs.String("trace", "", "write every JSON-RPC message in and out to this file, secrets masked")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.Arg(0) == "login" {
		return runLogin(fs.Args()[1:], stdin, stdout, stderr)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kin acp: unexpected arguments %q\n", fs.Args())
		return 2
	}
	log, closeLog, err := newLogger(*logFile, *logLevel, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "kin: %v\n", err)
		return 2
	}
	defer closeLog()
	var trace io.Writer
	if *traceFile != "" {
		f, err := os.OpenFile(*traceFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintf(stderr, "kin: --trace: %v\n", err)
			return 2
		}
		defer f.Close()
		trace = f
	}
	if err := reaper.Enable(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		log.Warn("kin cannot adopt orphaned processes; those that leave their process group may outlive kin", zap.Error(err))
	}
	defer reaper.Shutdown(2 * time.Second)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return acp.Serve(ctx, stdio{}, acp.Options{Options: serverOptions(log, trace)})
}
