package sandbox

import (
	"path/filepath"
	"sort"

	"github.com/kin-dev/kin/agent/boundary"
)

// bwrapTmp is the private temporary directory inside a bubblewrap sandbox:
// a fresh tmpfs per command over /tmp, so nothing in the host's /tmp (other
// programs' files, X11, tmux and ssh-agent sockets) is in reach, and nothing
// a command leaves there outlives it.
const bwrapTmp = "/tmp"

// bwrapNamespaces are the options that give a command new namespaces of
// every kind (user, mount, PID, IPC, UTS, cgroup and network), no
// capabilities (root keeps its full set in the sandbox unless told
// otherwise, and could remount / writable), no way to make further user
// namespaces, and death with its parent. userns says whether this bwrap
// can make the user namespace itself (0.8+, and a kernel that lets it).
func bwrapNamespaces(network, userns bool) []string {
	args := []string{"--unshare-all"}
	if network {
		args = append(args, "--share-net")
	}
	if userns {
		args = append(args, "--unshare-user", "--disable-userns")
	}
	return append(args, "--cap-drop", "ALL", "--die-with-parent")
}

// bwrapArgs is the bwrap command line (without the program) that runs argv
// in dir under r. Mounts go outermost first, so the innermost entry decides
// for every path: the whole file system read-only, a new /dev, /proc (of
// the new PID namespace), private /tmp and /run, then the policy's
// entries: writable folders bound read-write, read-only ones bound over
// them, paths that must not be created taken by an empty read-only folder, hidden
// folders covered with an empty tmpfs (made read-only last, after anything
// carved out of them is bound) and hidden files with /dev/null.
func bwrapArgs(r resolved, userns bool, dir string, argv []string) []string {
	args := bwrapNamespaces(r.network, userns)
	args = append(args, "--ro-bind", "/", "/")
	fixed := false
	addFixed := func() {
		if fixed {
			return
		}
		fixed = true
		args = append(args, "--dev", "/dev", "--proc", "/proc", "--tmpfs", bwrapTmp, "--tmpfs", "/run")
		if r.network && r.resolvDir != "" {
			// the name server list, which a private /run would hide
			args = append(args, "--ro-bind-try", r.resolvDir, r.resolvDir)
		}
	}
	var remount []string
	entries := bwrapPinned(r.entries)
	for i, e := range entries {
		if depth(e.path) > 0 {
			addFixed()
		}
		if bwrapCovered(entries, i) {
			continue
		}
		switch {
		case e.kind == kindWritable:
			args = append(args, "--bind", e.path, e.path)
		case e.kind == kindReadOnly:
			args = append(args, "--ro-bind", e.path, e.path)
		case e.kind == kindMissing:
			// an empty folder, read-only: nothing can be made there or in
			// it, and git sees nothing (an empty folder is not untracked,
			// git add -A passes it by). bubblewrap makes the (empty) mount
			// point; Sandbox.Command removes it once no command holds it.
			args = append(args, "--ro-bind", r.empty, e.path)
		case e.dir:
			args = append(args, "--tmpfs", e.path)
			remount = append(remount, e.path)
		default:
			args = append(args, "--ro-bind", "/dev/null", e.path)
		}
	}
	addFixed()
	for i := len(remount) - 1; i >= 0; i-- {
		args = append(args, "--remount-ro", remount[i])
	}
	args = append(args, "--chdir", dir, "--")
	return append(args, argv...)
}

// bwrapPinned returns entries (outermost first) with every folder between
// an entry and the writable folder around it pinned: bound onto itself,
// writable as before. A mount goes with its folder when that folder is
// renamed, so a command could otherwise rename the folder above a
// protected path (.github above the read-only .github/workflows, a
// submodule's folder above its .git placeholder, a nested repository's
// folder above its pinned .git) and make the path anew, unprotected, where
// it was. A folder that is a mount point cannot be renamed or removed
// (EBUSY). Folders inside a read-only or hidden folder are left alone:
// they cannot be renamed anyway, and a pin would make them writable.
//
// Pinned are the folders above what makes things run later (git's
// folders and internals, the boundary's list, placeholders), not above
// what is read-only only for looking like a secret (.env): every mount
// makes every later one of the command's start slower (bubblewrap reads
// the mount table for each), and a workspace of 200 services with a .env
// each took 3 times as long to start a command with them pinned; a hidden
// path needs none (its cover goes with its folder, still covering it).
func bwrapPinned(entries []entry) []entry {
	at := make(map[string]kind, len(entries))
	for _, e := range entries {
		at[e.path] = e.kind
	}
	var pins []entry
	for _, e := range entries {
		if e.kind == kindHidden || e.kind == kindReadOnly && !runsLaterIn(entries, e.path) {
			continue
		}
		var between []string
		d := filepath.Dir(e.path)
		for ; d != filepath.Dir(d); d = filepath.Dir(d) {
			if _, ok := at[d]; ok {
				break
			}
			between = append(between, d)
		}
		// only below a writable folder (the innermost entry holding e)
		if k, ok := at[d]; !ok || k != kindWritable {
			continue
		}
		for _, b := range between {
			at[b] = kindWritable
			pins = append(pins, entry{path: b, kind: kindWritable, dir: true})
		}
	}
	if len(pins) == 0 {
		return entries
	}
	out := append(append(make([]entry, 0, len(entries)+len(pins)), entries...), pins...)
	sort.SliceStable(out, func(i, j int) bool {
		di, dj := depth(out[i].path), depth(out[j].path)
		if di != dj {
			return di < dj
		}
		return out[i].path < out[j].path
	})
	return out
}

// runsLaterIn reports whether p, read-only below a writable folder of
// entries, is so because it makes things run later (boundary.RunsLater:
// git's internals, .github/workflows, ...), not only because its name
// says it holds secrets.
func runsLaterIn(entries []entry, p string) bool {
	w := deepestWritable(entries, p)
	if w == "" {
		return false
	}
	rel, err := filepath.Rel(w, p)
	return err == nil && boundary.RunsLater(filepath.ToSlash(rel)) != ""
}

// bwrapFixed are the mounts bwrapArgs makes besides the root: a path below
// one of them shows what that mount holds (a new, empty tmpfs for /tmp and
// /run), not the host's file.
var bwrapFixed = []string{"/dev", "/proc", bwrapTmp, "/run"}

// bwrapCovered reports whether entry i of entries (outermost first) would
// mount nothing the command does not already see: every mount costs the
// command's start a fraction of a millisecond, and a policy of a
// workspace has dozens. It is covered when
//   - it is read-only and what holds it shows the host's file read-only
//     already: the innermost folder entry around it is read-only, or there
//     is none and it is outside the fixed mounts (the root is bound
//     read-only);
//   - it is hidden and the innermost folder entry around it is hidden too
//     (an empty tmpfs, read-only at the end): the path is not there.
//
// Nothing else is skipped: a writable folder, a placeholder, a read-only
// path inside a writable or hidden folder or below /tmp or /run, a hidden
// path anywhere else, each changes what the command sees.
func bwrapCovered(entries []entry, i int) bool {
	e := entries[i]
	if e.kind != kindReadOnly && e.kind != kindHidden {
		return false
	}
	outer := -1 // the innermost folder entry holding e
	for j := 0; j < i; j++ {
		o := entries[j]
		if o.dir && o.path != e.path && within(o.path, e.path) && (outer < 0 || depth(o.path) > depth(entries[outer].path)) {
			outer = j
		}
	}
	if e.kind == kindHidden {
		return outer >= 0 && entries[outer].kind == kindHidden
	}
	if outer >= 0 {
		return entries[outer].kind == kindReadOnly
	}
	for _, f := range bwrapFixed {
		if within(f, e.path) {
			return false
		}
	}
	return true
}
