package builtin

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/kin-dev/kin/agent/sandbox"
)

// commandPolicy is the sandbox policy of one command: the sandbox's own
// (the roots, sandboxWritable and the cache writable, $KIN_HOME hidden, the
// .git internals and .kin of every writable folder read-only) plus the
// always-ask sensitive paths: the credential folders and files of the
// person's home hidden, and the sensitive files near the top of every
// writable folder read-only.
func commandPolicy(sb *sandbox.Sandbox, roots []string, network bool) sandbox.Policy {
	p := sb.For(roots, network)
	p.Hidden = append(p.Hidden, homeSecrets()...)
	for _, w := range p.Writable {
		if filepath.Base(w) == ".git" {
			continue // the pin of a root's .git (see sandbox.For)
		}
		p.ReadOnly = append(p.ReadOnly, sensitiveBelow(w)...)
	}
	return p
}

// homeExtraSecrets are credential stores in a home folder that the
// sensitive patterns (which are about writes) do not name.
var homeExtraSecrets = []string{
	".config/gh", ".config/hub", ".config/git/credentials", ".cargo/credentials", ".cargo/credentials.toml",
	".local/share/keyrings", ".password-store", ".terraform.d", ".vault-token",
	".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
	"Library/Keychains", "Library/Cookies", "Library/Application Support/Google/Chrome", "Library/Application Support/Firefox",
}

// homeSecrets lists what exists of the person's credential folders and
// files: every folder pattern of sensitivePatterns and every file pattern
// without wildcards, taken in the home folder, and homeExtraSecrets.
func homeSecrets() []string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || home == "/" {
		return nil
	}
	var names []string
	for _, pat := range sensitivePatterns {
		if dir, ok := strings.CutSuffix(pat, "/"); ok {
			if dir != ".git" {
				names = append(names, dir)
			}
		} else if !strings.ContainsAny(pat, "*?[") {
			names = append(names, pat)
		}
	}
	names = append(names, homeExtraSecrets...)
	var out []string
	for _, n := range names {
		p := filepath.Join(home, filepath.FromSlash(n))
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// sensitiveScanDepth and sensitiveScanMax bound the look for sensitive
// files in a writable folder: it runs before every command, so it looks
// at the top levels only, where .env files and keys usually are.
const (
	sensitiveScanDepth = 2
	sensitiveScanMax   = 2000
)

// sensitiveSkip are folders not looked into: dependencies and build output.
var sensitiveSkip = map[string]bool{
	".git": true, "node_modules": true, "vendor": true, "target": true, "dist": true, "build": true,
	".venv": true, "venv": true, "__pycache__": true, ".cache": true,
}

// sensitiveBelow lists the sensitive files and folders (sensitive()) in
// the top levels of dir.
func sensitiveBelow(dir string) []string {
	var out []string
	seen := 0
	var walk func(d string, level int)
	walk = func(d string, level int) {
		entries, err := os.ReadDir(d)
		if err != nil {
			return
		}
		for _, e := range entries {
			if seen++; seen > sensitiveScanMax {
				return
			}
			name := e.Name()
			p := filepath.Join(d, name)
			if sensitiveSkip[name] {
				continue
			}
			if pat := sensitive(name); pat != "" {
				out = append(out, p)
				continue
			}
			if e.IsDir() && level < sensitiveScanDepth {
				walk(p, level+1)
			}
		}
	}
	walk(dir, 1)
	return out
}
