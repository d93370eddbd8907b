package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/mcp/trust"
)

// runGrants shows and removes the standing grants that outlive a session:
// permanent "always allow" grants and MCP server trust.
func runGrants(args []string, stdout, stderr io.Writer) int {
	home := kinHome()
	grants, err := permission.LoadGrants(filepath.Join(home, "grants.json"))
	if err != nil {
		fmt.Fprintf(stderr, "kin grants: %v\n", err)
		return 1
	}
	tr := trust.Open(home)
	if len(args) == 0 || args[0] == "list" {
		n := 0
		// a server's name is what a repository wrote: printed as quoted,
		// the rest as oneLine (see shown.go)
		for _, g := range grants.List() {
			fmt.Fprintf(stdout, "%s\t%s\t%s\n", oneLine(g.ID), oneLine(g.Type), oneLine(g.Label))
			n++
		}
		// a project server trusted in several projects has a line per
		// project; trust:<name> revokes them all
		for _, e := range tr.List() {
			where := ""
			if e.Project != "" {
				where = " in " + oneLine(e.Project)
			}
			fmt.Fprintf(stdout, "trust:%s\ttrust\tMCP server %s (%s)%s\n", quoted(e.Name), quoted(e.Name), oneLine(e.Display), where)
			n++
		}
		if n == 0 {
			fmt.Fprintln(stdout, "no standing grants")
		}
		return 0
	}
	if args[0] != "revoke" || len(args) != 2 {
		fmt.Fprintln(stderr, "Usage: kin grants [list] | kin grants revoke ID")
		return 2
	}
	id := args[1]
	if name, ok := strings.CutPrefix(id, "trust:"); ok {
		err := tr.Revoke(name)
		if u, quoted := unquoteName(name); quoted && errors.Is(err, trust.ErrNotFound) {
			name, err = u, tr.Revoke(u) // the id as kin grants list showed it
		}
		if err != nil {
			fmt.Fprintf(stderr, "kin grants revoke: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "revoked trust in %s: it asks again before it starts\n", quoted(name))
		return 0
	}
	found, err := grants.Revoke(id)
	if err != nil {
		fmt.Fprintf(stderr, "kin grants revoke: %v\n", err)
		return 1
	}
	if !found {
		fmt.Fprintf(stderr, "kin grants revoke: no grant %q (see kin grants list)\n", id)
		return 1
	}
	fmt.Fprintf(stdout, "revoked %s\n", id)
	return 0
}
