package main

import (
	"encoding/json"

	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/trust"
)

const mcpUsage = `Usage:
  kin mcp list
  kin mcp get NAME
  kin mcp show NAME [--accept HASH]   the entry and a trusted server's instructions
  kin mcp add [--scope project|global] [--env KEY=VALUE]... NAME -- COMMAND [ARGS...]
  kin mcp add [--scope project|global] --url URL [--header NAME=VALUE]... [--oauth] NAME
  kin mcp remove [--scope project|global] NAME
  kin mcp enable|disable [--scope project|global] NAME
  kin mcp adopt NAME          copy a server from a root .mcp.json into .kin/mcp.json

Secrets: write --env 'TOKEN=${MY_TOKEN}' (single quotes) and kin expands it from the
environment when it starts the server; the file keeps the ${MY_TOKEN} spelling. A value
typed in clear for a project server (env, header, URL password or query value) never goes
into .kin/mcp.json, a file people commit: kin stores it in $KIN_HOME/mcp_secrets.json (0600)
for this project's server and writes a ${VAR} reference instead.
`

// multiFlag collects repeated KEY=VALUE flags.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func runMCP(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, mcpUsage)
		return 2
	}
	wd, _ := os.Getwd()
	home := kinHome()
	store := config.NewStore(wd, home)
	store.Moved = func(name string, moved []string) {
		fmt.Fprintf(stdout, "kept out of %s (a file people commit): %s; the values are stored in %s (0600) for this project's %s\n",
			config.ProjectPath(wd), strings.Join(moved, ", "), config.SecretsPath(home), name)
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "kin mcp %s: %v\n", args[0], err)
		return 1
	}
	fs := flag.NewFlagSet("mcp "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	scope := fs.String("scope", "", "project or global")
	var envs, headers multiFlag
	fs.Var(&envs, "env", "KEY=VALUE for a stdio server (repeatable)")
	fs.Var(&headers, "header", "NAME=VALUE for an http server (repeatable)")
	url := fs.String("url", "", "the endpoint of an http server")
	oauth := fs.Bool("oauth", false, "sign in with OAuth (http servers)")
	timeout := fs.Int("timeout", 0, "per-call timeout in milliseconds")
	acceptHash := fs.String("accept", "", "show: accept the changed instructions whose hash this is")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	rest := fs.Args()
	// Flags may follow the name too, up to "--" (kin mcp add files --env
	// K=V -- npx srv, the order other MCP clients take). The flag package
	// stops at the name: the rest became the server's command and
	// arguments, and the value typed for --env, --header or --url went
	// into .kin/mcp.json as a plain argument, a secret in a file people
	// commit. Not after a "--" before the name: everything there is
	// positional.
	if len(rest) > 0 && !(len(rest) < len(args)-1 && args[len(args)-len(rest)-1] == "--") {
		name := rest[0]
		if err := fs.Parse(rest[1:]); err != nil {
			return 2
		}
		rest = append([]string{name}, fs.Args()...)
	} else if len(rest) > 1 && rest[1] == "--" { // -- NAME -- COMMAND ARGS...
		rest = append(rest[:1], rest[2:]...)
	}
	// A flag another form of the subcommand takes, or a second name, is
	// refused rather than dropped: dropped, --env beside --url (or
	// --header without it) left a server without the secret the person
	// typed, and "remove a b" removed a alone.
	extra := func(max int) bool {
		if len(rest) > max {
			fmt.Fprintf(stderr, "kin mcp %s: unexpected arguments %q\n\n%s", args[0], rest[max:], mcpUsage)
			return true
		}
		return false
	}
	needName := func() (string, bool) {
		if len(rest) == 0 || rest[0] == "" {
			fmt.Fprintf(stderr, "kin mcp %s: a server name is required\n\n%s", args[0], mcpUsage)
			return "", false
		}
		return rest[0], true
	}

	switch args[0] {
	case "list":
		if extra(0) {
			return 2
		}
		return mcpList(wd, home, stdout, stderr)
	case "get":
		name, ok := needName()
		if !ok || extra(1) {
			return 2
		}
		return mcpGet(wd, home, name, stdout, stderr)
	case "show":
		name, ok := needName()
		if !ok || extra(1) {
			return 2
		}
		return mcpShow(wd, home, name, *acceptHash, stdout, stderr)
	case "add":
		name, ok := needName()
		if !ok {
			return 2
		}
		if *url != "" && len(envs) > 0 || *url == "" && (len(headers) > 0 || *oauth) {
			fmt.Fprintf(stderr, "kin mcp add: --env is for a stdio server (a command after --), --header and --oauth for an http one (--url)\n\n%s", mcpUsage)
			return 2
		}
		if bad := badArg(rest[1:], append([]string{"--url=" + *url}, append(envs, headers...)...)); bad != "" { // the name: Store.Add says what a name may be
			fmt.Fprintf(stderr, "kin mcp add: %s; nothing was written\n", bad)
			return 2
		}
		entry := map[string]any{}
		if *url != "" {
			if extra(1) {
				return 2
			}
			entry["type"] = "http"
			entry["url"] = *url
			if len(headers) > 0 {
				entry["headers"] = pairs(headers)
			}
			if *oauth {
				entry["auth"] = "oauth"
			}
		} else {
			if len(rest) < 2 {
				fmt.Fprintf(stderr, "kin mcp add: give a command after --, or --url\n\n%s", mcpUsage)
				return 2
			}
			entry["command"] = rest[1]
			if len(rest) > 2 {
				entry["args"] = rest[2:]
			}
			if len(envs) > 0 {
				entry["env"] = pairs(envs)
			}
		}
		if *timeout > 0 {
			entry["timeout"] = *timeout
		}
		raw, _ := json.Marshal(entry)
		sc := config.Scope(*scope)
		if sc == "" {
			sc = config.ScopeProject
		}
		if err := store.Add(sc, name, raw); err != nil {
			return fail(err)
		}
		path, _ := store.Path(sc)
		fmt.Fprintf(stdout, "added %s to %s\nIt starts after you approve it the next time kin runs.\n", name, path)
		return 0
	case "remove":
		name, ok := needName()
		if !ok || extra(1) {
			return 2
		}
		sc, err := scopeOf(wd, home, *scope, name)
		if err != nil {
			return fail(err)
		}
		if err := store.Remove(sc, name); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "removed %s (%s)\n", name, sc)
		return 0
	case "enable", "disable":
		name, ok := needName()
		if !ok || extra(1) {
			return 2
		}
		if err := store.SetEnabled(config.Scope(*scope), name, args[0] == "enable"); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "%sd %s\n", args[0], name)
		return 0
	case "adopt":
		name, ok := needName()
		if !ok || extra(1) {
			return 2
		}
		if err := store.Adopt(name); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "adopted %s into %s (it still needs your approval to start)\n", name, config.ProjectPath(wd))
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, mcpUsage)
		return 0
	}
	fmt.Fprintf(stderr, "kin mcp: unknown subcommand %q\n\n%s", args[0], mcpUsage)
	return 2
}

// scopeOf picks the scope of an existing server when none was given.
func scopeOf(wd, home, scope, name string) (config.Scope, error) {
	if scope != "" {
		return config.Scope(scope), nil
	}
	cfg, err := config.Load(wd, home)
	if err != nil {
		return "", err
	}
	if s, ok := cfg.Server(name); ok {
		return s.Scope, nil
	}
	return "", fmt.Errorf("%w: no server named %q (see kin mcp list)", config.ErrNotFound, name)
}

// badArg says what is wrong with the first of args or pairs kin mcp add
// cannot store as typed ("" when none): bytes that are not UTF-8, which
// JSON turns into U+FFFD (the server would run another path than the one
// typed, and a secret would be stored altered).
// A KEY=VALUE pair's value may be a secret (as a URL's query or password
// may: it goes as "--url=URL"): only its key is named.
func badArg(args, pairs []string) string {
	const why = "is not valid UTF-8, which an MCP configuration file (JSON) cannot hold as typed"
	for _, a := range args {
		if !utf8.ValidString(a) {
			return fmt.Sprintf("%q %s", a, why)
		}
	}
	for _, kv := range pairs {
		if !utf8.ValidString(kv) {
			k, _, _ := strings.Cut(kv, "=")
			return fmt.Sprintf("the value given for %q %s", k, why)
		}
	}
	return ""
}

func pairs(kvs []string) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func mcpList(wd, home string, stdout, stderr io.Writer) int {
	cfg, err := config.Load(wd, home)
	if err != nil {
		fmt.Fprintf(stderr, "kin mcp list: %v\n", err)
		return 1
	}
	tr := trust.Open(home)
	for _, n := range cfg.Notices {
		fmt.Fprintf(stdout, "note: %s\n", n)
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(stdout, "warning: %s\n", w)
	}
	if len(cfg.Servers)+len(cfg.Foreign) == 0 {
		fmt.Fprintf(stdout, "no MCP servers configured (%s, %s)\n", config.ProjectPath(wd), config.GlobalPath(home))
		return 0
	}
	for _, s := range cfg.Servers {
		state := "not trusted: asks before it starts"
		if tr.IsTrusted(trust.LaunchOf(s, wd, home, os.LookupEnv)) {
			state = "trusted"
		}
		fmt.Fprintf(stdout, "%s  [%s]\n", s.Display().Line(), state)
	}
	for _, s := range cfg.Shadowed {
		fmt.Fprintf(stdout, "%s  [shadowed by the project entry]\n", s.Display().Line())
	}
	for _, s := range cfg.Foreign {
		d := s.Display() // its Name quoted as needed: a repository's .mcp.json wrote it
		fmt.Fprintf(stdout, "%s  [foreign, not loaded: kin mcp adopt %s]\n", d.Line(), d.Name)
	}
	return 0
}

func mcpGet(wd, home, name string, stdout, stderr io.Writer) int {
	cfg, err := config.Load(wd, home)
	if err != nil {
		fmt.Fprintf(stderr, "kin mcp get: %v\n", err)
		return 1
	}
	s, ok := cfg.Server(name)
	if !ok {
		for _, f := range cfg.Foreign {
			if f.Name == name {
				s, ok = f, true
			}
		}
	}
	if !ok {
		fmt.Fprintf(stderr, "kin mcp get: no server named %q\n", name)
		return 1
	}
	d := s.Display()
	l := trust.LaunchOf(s, wd, home, os.LookupEnv)
	fmt.Fprintf(stdout, "name:      %s\nscope:     %s\ntransport: %s\nlaunch:    %s\n", d.Name, d.Scope, d.Transport, d.Launch)
	// as the launch approval names it
	if p := l.ProjectProgram(s.Command); p != "" {
		fmt.Fprintf(stdout, "program:   %s (a file of this project, found by PATH)\n", oneLine(p))
	}
	if len(d.Env) > 0 {
		fmt.Fprintf(stdout, "env:       %s\n", strings.Join(d.Env, ", "))
	}
	if len(d.Headers) > 0 {
		fmt.Fprintf(stdout, "headers:   %s\n", strings.Join(d.Headers, ", "))
	}
	if d.Auth != "" {
		fmt.Fprintf(stdout, "auth:      %s %s\n", d.Auth, d.OAuth)
	}
	if d.TimeoutMS > 0 {
		fmt.Fprintf(stdout, "timeout:   %d ms\n", d.TimeoutMS)
	}
	if d.AllowedToolsSet {
		fmt.Fprintf(stdout, "tools:     only %s\n", strings.Join(d.AllowedTools, ", "))
	}
	if d.Sandbox != "" {
		fmt.Fprintf(stdout, "sandbox:   %s\n", d.Sandbox) // how it differs from the default confinement
	}
	fmt.Fprintf(stdout, "enabled:   %v\ntrusted:   %v\nfile:      %s\n", !d.Disabled, trust.Open(home).IsTrusted(l), s.File)
	return 0
}
