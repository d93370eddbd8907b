package builtin

import (
	"path/filepath"
	"strings"
	"unicode"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/agent/visible"
)

// shellWrappers are programs that run other programs (or are shells): a
// grant for them would be a grant for anything, so they never get one.
var shellWrappers = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "fish": true,
	"csh": true, "tcsh": true, "ash": true, "busybox": true, "pwsh": true, "powershell": true,
	"env": true, "sudo": true, "doas": true, "su": true, "runuser": true, "pkexec": true, "sg": true,
	"xargs": true, "nohup": true, "timeout": true, "nice": true, "ionice": true, "chrt": true,
	"taskset": true, "setsid": true, "stdbuf": true, "unbuffer": true, "time": true, "watch": true,
	"eval": true, "exec": true, "command": true, "builtin": true, "source": true, ".": true,
	"chroot": true, "nsenter": true, "unshare": true, "strace": true, "ltrace": true, "flock": true,
	"script": true, "parallel": true, "firejail": true,
}

// subcommandPrograms are well-known multi-command programs: their grant
// covers one subcommand ("git status", not "git").
var subcommandPrograms = map[string]bool{
	"go": true, "git": true, "npm": true, "npx": true, "pnpm": true, "yarn": true, "bun": true,
	"cargo": true, "make": true, "docker": true, "podman": true, "kubectl": true, "helm": true,
	"pip": true, "pip3": true, "uv": true, "poetry": true, "gh": true, "terraform": true,
	"deno": true, "dotnet": true, "rustup": true, "mix": true, "swift": true, "gradle": true,
	"mvn": true, "composer": true, "bundle": true, "rake": true,
}

// runnerSubcommands run a named script or tool: their grant covers that
// name too ("npm run test", not every "npm run").
var runnerSubcommands = map[string]map[string]bool{
	"npm":    {"run": true, "run-script": true, "exec": true},
	"pnpm":   {"run": true, "exec": true, "dlx": true},
	"yarn":   {"run": true, "exec": true, "dlx": true},
	"bun":    {"run": true, "x": true},
	"uv":     {"run": true, "tool": true},
	"poetry": {"run": true},
	"docker": {"compose": true},
	"podman": {"compose": true},
	"go":     {"tool": true},
	"bundle": {"exec": true},
	"dotnet": {"tool": true},
}

// bashGrant returns the grant "always allow" would give for a command, or
// nil when the command is not one simple command of a plain program: a
// grant never covers a whole shell.
func bashGrant(command string) *tool.Grant {
	words, ok := simpleCommand(command)
	if !ok || len(words) == 0 {
		return nil
	}
	prog := words[0]
	if strings.Contains(prog, "=") { // VAR=value prefix: changes what runs
		return nil
	}
	base := filepath.Base(prog)
	if shellWrappers[base] {
		return nil
	}
	if base == "find" {
		for _, w := range words[1:] {
			switch w {
			case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprintf", "-fls":
				return nil // runs or writes things
			}
		}
	}
	scope := []string{prog}
	if subcommandPrograms[base] && len(words) > 1 {
		sub := words[1]
		if strings.HasPrefix(sub, "-") {
			return nil // options before the subcommand (git -c ..., go -C ...) change what it does
		}
		scope = append(scope, sub)
		if runnerSubcommands[base][sub] && len(words) > 2 {
			name := words[2]
			if strings.HasPrefix(name, "-") {
				return nil
			}
			scope = append(scope, name)
		}
	}
	for _, w := range scope {
		if !plainWord(w) {
			return nil
		}
	}
	s := strings.Join(scope, " ")
	return &tool.Grant{
		Key:   "bash:" + s,
		Label: "Always allow `" + s + "` commands",
	}
}

// plainWord reports whether a word of a grant's scope reads as what it is:
// no space in it (the key joins the words with spaces, so `'git status'`,
// one program of that name, would otherwise get the key of `git status`
// and be answered by its grant), and no character a person cannot see or
// tell from a space (a "git\u00a0status" card reads as git status).
func plainWord(w string) bool {
	return strings.IndexFunc(w, func(r rune) bool {
		return r == ' ' || !unicode.IsPrint(r) || visible.Hidden(r)
	}) < 0
}

// commandGrant is the grant "always allow" gives for a command run the way
// sb says: a grant for a confined, network-less command ("bash:go test")
// covers only such runs; one with network ("bash-net:") and one for an
// unconfined run ("bash-unconfined:") are kept apart, so that allowing
// `curl` without network, or while a sandbox was there, never allows it
// with more.
func commandGrant(command string, sb *tool.Sandbox) *tool.Grant {
	g := bashGrant(command)
	if g == nil || sb == nil {
		return g
	}
	scope := strings.TrimPrefix(g.Key, "bash:")
	switch {
	case !sb.Confined:
		return &tool.Grant{Key: "bash-unconfined:" + scope, Label: "Always allow unconfined `" + scope + "` commands"}
	case sb.Network:
		return &tool.Grant{Key: "bash-net:" + scope, Label: "Always allow `" + scope + "` commands with network access"}
	}
	return g
}

// simpleCommand splits a command into words if it is one simple command:
// no operators (; & | && ||), no redirections (< >), no substitutions ($
// and backticks), no subshells or groups, no escapes, no line breaks.
// Quotes are honoured, so `go test -run 'A|B'` is simple.
func simpleCommand(s string) ([]string, bool) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '$' || s[j] == '`' || s[j] == '\\' || s[j] == '\n' || s[j] == '\r' {
					return nil, false
				}
			}
			if j == len(s) {
				return nil, false
			}
			cur.WriteString(s[i+1 : j])
			i = j
			inWord = true
		case strings.IndexByte(";&|`$<>(){}\\\n\r!#", c) >= 0, c < 0x20, c == 0x7f:
			return nil, false
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, true
}
