package sandbox

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
// them, hidden folders covered with an empty tmpfs (made read-only last,
// after anything carved out of them is bound) and hidden files with
// /dev/null.
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
	for _, e := range r.entries {
		if depth(e.path) > 0 {
			addFixed()
		}
		switch {
		case e.kind == kindWritable:
			args = append(args, "--bind", e.path, e.path)
		case e.kind == kindReadOnly:
			args = append(args, "--ro-bind", e.path, e.path)
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
