package main

import (
	"flag"
	"fmt"
	"io"

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
	logLevel := fs.String("log-level", "", "debug, info, warn or error (default: warn on stderr, info in a --log-file)")
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
	if *logLevel == "" {
		// ACP clients show an agent's stderr to the person (agent-shell
		// turns every line into an error block, Zed keeps it in its log):
		// there, only what needs a person's eye; a log file gets the rest.
		*logLevel = "warn"
		if *logFile != "" {
			*logLevel = "info"
		}
	}
	ctx, sigs, log, trace, done, ok := startProcess(*logFile, *logLevel, *traceFile, stderr)
	if !ok {
		return 2
	}
	defer done()
	return acp.Serve(ctx, stdio{sigs.ready}, acp.Options{Options: serverOptions(log, trace)})
}
