package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kin-dev/kin/rpc"
)

// runTrust shows and revokes what the person trusted (the one trust
// ledger, $KIN_HOME/trust.json): MCP servers' launches, the project's
// skills, hooks and instruction files, MCP servers' skills.
func runTrust(args []string, stdout, stderr io.Writer) int {
	home := kinHome()
	if len(args) == 0 || args[0] == "list" && len(args) == 1 {
		list, err := rpc.TrustList(home)
		if err != nil {
			fmt.Fprintf(stderr, "kin trust: %v\n", err)
			return 1
		}
		if len(list.Entries) == 0 {
			fmt.Fprintln(stdout, "nothing is trusted")
			return 0
		}
		// Every field but the kind is what a repository or a server wrote
		// (a server's name, a skill's description, a hook's command, a
		// folder's name): printed as oneLine, a server's name in its id as
		// quoted (see shown.go).
		// trust/list has a row per launch grant (a name trusted in two
		// projects shows what runs in each; trust:NAME revokes them all).
		for _, e := range list.Entries {
			id := oneLine(e.ID)
			if name, ok := strings.CutPrefix(e.ID, "trust:"); ok {
				id = "trust:" + quoted(name)
			}
			what := e.Name
			if what == "" {
				what = e.Path
			}
			line := fmt.Sprintf("%s\t%s\t%s", id, e.Kind, oneLine(what))
			if e.Display != "" {
				line += " (" + oneLine(e.Display) + ")"
			}
			if e.Project != "" {
				line += " in " + oneLine(e.Project)
			}
			fmt.Fprintln(stdout, line)
		}
		return 0
	}
	if args[0] != "revoke" || len(args) != 2 {
		fmt.Fprintln(stderr, "Usage: kin trust [list] | kin trust revoke ID")
		return 2
	}
	err := rpc.TrustRevoke(home, args[1])
	if name, ok := strings.CutPrefix(args[1], "trust:"); ok && errors.Is(err, rpc.ErrNotFound) {
		if u, quoted := unquoteName(name); quoted { // the id as kin trust list showed it
			err = rpc.TrustRevoke(home, "trust:"+u)
		}
	}
	if err != nil {
		if errors.Is(err, rpc.ErrNotFound) {
			fmt.Fprintf(stderr, "kin trust revoke: no entry %q (see kin trust list)\n", args[1])
			return 1
		}
		fmt.Fprintf(stderr, "kin trust revoke: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "revoked %s: kin asks again before it runs or reads it\n", oneLine(args[1]))
	return 0
}
