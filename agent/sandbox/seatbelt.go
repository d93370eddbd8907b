package sandbox

import (
	"fmt"
	"strings"
)

// sandboxExec is macOS's Seatbelt front end, by absolute path: a PATH that
// names another one must not choose the sandbox.
const sandboxExec = "/usr/bin/sandbox-exec"

// seatbeltBase is what every confined command may do besides files and
// network: run and signal its own processes, read system information and
// preferences, the few system services that name lookups and libraries
// need, POSIX semaphores and shared memory (Python's multiprocessing), and
// pseudo-terminals of its own.
const seatbeltBase = `(version 1)
(deny default)
(allow process-exec process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
(allow user-preference-read)
(allow mach-host*)
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.notification_center")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.PowerManagement.control"))
(allow ipc-posix-sem ipc-posix-shm)
(allow pseudo-tty)
(allow file-ioctl (literal "/dev/ptmx") (regex #"^/dev/ttys[0-9]+$"))
`

// seatbeltProfile is the profile and its parameters (name=value, for -D)
// for r with tmp as the command's private temporary directory. Paths are
// never written into the profile: each is a parameter, so no path can
// change the profile's meaning. Later rules override earlier ones, and
// every rule carves out the entries nested in it, so the innermost entry
// decides for every path as it does under bubblewrap.
func seatbeltProfile(r resolved, tmp string) (string, []string) {
	var b strings.Builder
	var params []string
	b.WriteString(seatbeltBase)
	param := func(prefix string, i int, path string) string {
		name := fmt.Sprintf("%s%d", prefix, i)
		params = append(params, name+"="+path)
		return name
	}
	names := make([]string, len(r.entries))
	for i, e := range r.entries {
		prefix := map[kind]string{kindWritable: "WRITABLE_", kindReadOnly: "READONLY_", kindHidden: "HIDDEN_", kindMissing: "MISSING_"}[e.kind]
		names[i] = param(prefix, i, e.path)
	}
	tmpName := param("TMPDIR_", 0, tmp)
	match := func(i int) string {
		// a path that must not be created: neither as a file nor as a
		// folder with things in it
		if r.entries[i].dir || r.entries[i].kind == kindMissing {
			return fmt.Sprintf("(subpath (param %q))", names[i])
		}
		return fmt.Sprintf("(literal (param %q))", names[i])
	}
	// match entry i but not the entries of another kind nested in it
	carved := func(i int) string {
		var nots []string
		for j, e := range r.entries {
			if j != i && e.kind != r.entries[i].kind && r.entries[i].dir && within(r.entries[i].path, e.path) && e.path != r.entries[i].path {
				nots = append(nots, "(require-not "+match(j)+")")
			}
		}
		if len(nots) == 0 {
			return match(i)
		}
		return "(require-all " + match(i) + " " + strings.Join(nots, " ") + ")"
	}

	b.WriteString("\n; reading: everything but the hidden paths\n(allow file-read*)\n")
	for i, e := range r.entries {
		if e.kind == kindHidden {
			fmt.Fprintf(&b, "(deny file-read* file-write* %s)\n", carved(i))
		}
	}
	b.WriteString("\n; writing: the writable folders but what is read-only or hidden in them, the private temporary directory, the null device\n")
	for i, e := range r.entries {
		if e.kind == kindWritable {
			fmt.Fprintf(&b, "(allow file-write* %s)\n", carved(i))
		}
	}
	fmt.Fprintf(&b, "(allow file-write* (subpath (param %q)))\n", tmpName)
	b.WriteString("(allow file-write-data (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/dtracehelper\"))\n")

	b.WriteString("\n; network\n")
	if r.network {
		// IP only, and the name service: a Unix socket could reach local
		// daemons that act outside the sandbox.
		b.WriteString("(allow network-outbound (remote ip))\n(allow network-inbound (local ip))\n(allow system-socket)\n")
		b.WriteString("(allow network-outbound (literal \"/private/var/run/mDNSResponder\"))\n")
		b.WriteString("(allow mach-lookup (global-name \"com.apple.dnssd.service\") (global-name \"com.apple.trustd.agent\"))\n")
	} else {
		b.WriteString("; none: (deny default) covers every network operation\n")
	}
	return b.String(), params
}

// seatbeltArgs is the sandbox-exec command line (without the program) that
// runs argv under r with tmp as its temporary directory.
func seatbeltArgs(r resolved, tmp string, argv []string) []string {
	profile, params := seatbeltProfile(r, tmp)
	args := []string{"-p", profile}
	for _, p := range params {
		args = append(args, "-D", p)
	}
	args = append(args, "--")
	return append(args, argv...)
}
