// Command kin is a coding agent that lives behind an editor.
//
//	kin serve     the JSON-RPC service an editor spawns (stdio, or --listen)
//	kin acp       the same service for Agent Client Protocol editors (Zed, JetBrains...)
//	kin login     store the model service's key in $KIN_HOME/settings.json
//	kin chat      the same service in a terminal
//	kin mcp ...   manage MCP servers without an editor
//	kin grants    list and revoke standing grants
//	kin trust     list and revoke what you trusted (servers, skills, hooks, instructions)
//	kin version
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/sandbox"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	code := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	// the placeholders of ended commands go in the background; none
	// stays behind a kin that exits
	sandbox.Settle()
	os.Exit(code)
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "serve", "acp", "login", "chat", "mcp", "grants", "trust":
		home := kinHome()
		if home == "" {
			fmt.Fprintln(stderr, "kin: neither KIN_HOME nor HOME is set, so kin does not know where your settings, sign-ins and trust live; set KIN_HOME (such as KIN_HOME=/home/you/.kin)")
			return 2
		}
		// A relative home is the no-home case again (see kinHome): taken
		// from the folder kin starts in, the repository for an editor's
		// kin. "~/.kin" is one: an editor's or a service's env setting
		// does not expand the ~ a shell would.
		if !filepath.IsAbs(home) {
			fmt.Fprintf(stderr, "kin: your settings, sign-ins and trust would live in %q, a relative path: kin would take it from the folder it starts in, which an editor makes the repository; set KIN_HOME to an absolute path (such as KIN_HOME=/home/you/.kin; a ~ is expanded only by a shell)\n", home)
			return 2
		}
	}
	switch args[0] {
	case "serve", "acp", "chat":
		scrubKeys()
	}
	switch args[0] {
	case "serve":
		return runServe(args[1:], stderr)
	case "acp":
		return runACP(args[1:], stdin, stdout, stderr)
	case "login":
		return runLogin(args[1:], stdin, stdout, stderr)
	case "chat":
		return runChat(args[1:], stdin, stdout, stderr)
	case "mcp":
		return runMCP(args[1:], stdout, stderr)
	case "grants":
		return runGrants(args[1:], stdout, stderr)
	case "trust":
		return runTrust(args[1:], stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintf(stdout, "kin %s\n", version)
		return 0
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "kin: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `kin: a coding agent behind your editor

Usage:
  kin serve [--listen 127.0.0.1:PORT [--any-local-user]] [--log-file F] [--log-level L] [--trace F]
  kin acp [--log-file F] [--log-level L] [--trace F]
  kin login [--base-url URL] [--model M]
  kin chat [--connect 127.0.0.1:PORT] [--trace F] [--rpc] [--approve-all] [QUESTION...]
  kin mcp add|list|get|remove|enable|disable|adopt ...
  kin grants list|revoke ID
  kin trust list|revoke ID
  kin version

Environment:
  OPENAI_API_KEY   key for the model service (required for turns; or run kin login)
  OPENAI_BASE_URL  a Responses API service other than OpenAI's
  KIN_MODEL        the model to use
  KIN_HOME         where kin keeps sessions and settings (default ~/.kin)
`)
}

// kinHome is where configuration and state live: $KIN_HOME, else ~/.kin,
// else "" (run refuses the commands that need it). Never ".kin" relative to
// the working directory: an editor starts kin in the repository, whose
// .kin/ would then be the person's settings (the model service the key is
// sent to), servers, grants and trust, and `kin login` would write the key
// into the working tree.
func kinHome() string {
	return boundary.DefaultKinHome()
}

// scrubKeys erases kin's model keys from this process's original
// environment block (boundary.ScrubEnviron; Linux), which any process of
// the same user can read in /proc/<pid>/environ: a command kin runs
// unconfined no longer finds them in its parent's. kin's own copy of the
// environment keeps them.
func scrubKeys() {
	_, _ = boundary.ScrubEnviron(boundary.ModelKeyVars(kinHome()))
}
