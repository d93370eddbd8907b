package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kin-dev/kin/agent/settings"
)

// FromSettings is the Config the person asked for in $KIN_HOME/settings.json:
// sandbox, sandboxWritable and autoApproveSandboxedCommands, with $KIN_HOME
// hidden and the cache folder in $KIN_HOME/cache/sandbox (carved out of
// the hidden home). A file that cannot be read, or a mode kin does not know,
// is read as "required", the strictest, and reported as the Problem; a
// sandboxWritable entry that is relative or missing is left out and
// reported.
func FromSettings(home string) Config {
	cfg := Config{Mode: ModeAuto, Hidden: []string{home}, Cache: filepath.Join(home, "cache", "sandbox"), RunDir: filepath.Join(home, "run", "sandbox")}
	st, err := settings.Load(home)
	if err != nil {
		cfg.Mode, cfg.Problem = ModeRequired, err.Error()+`; commands are treated as "sandbox": "required" until it is fixed`
		return cfg
	}
	var problems []string
	mode, err := ParseMode(st.Sandbox)
	if err != nil {
		mode = ModeRequired
		problems = append(problems, err.Error()+` (read as "required")`)
	}
	cfg.Mode, cfg.AutoApprove = mode, st.AutoApproveSandboxedCommands
	for _, w := range st.SandboxWritable {
		p := w
		if rest, ok := strings.CutPrefix(w, "~/"); ok {
			if h, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(h, rest)
			}
		}
		switch {
		case !filepath.IsAbs(p):
			problems = append(problems, fmt.Sprintf("sandboxWritable: %q is not an absolute path (left out)", w))
		default:
			if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
				problems = append(problems, fmt.Sprintf("sandboxWritable: %s is not an existing folder (left out)", p))
				continue
			}
			cfg.Writable = append(cfg.Writable, filepath.Clean(p))
		}
	}
	if len(problems) > 0 {
		cfg.Problem = settings.Path(home) + ": " + strings.Join(problems, "; ")
	}
	return cfg
}
