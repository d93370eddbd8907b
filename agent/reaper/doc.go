// Package reaper keeps track of the processes that the programs kin starts
// (a bash command, a stdio MCP server) start in turn, including those that
// leave the program's process group with setsid() or a double fork, and
// stops them with their owner; and it reaps the zombies of the orphans it
// adopts.
//
// On Linux, [Enable] makes kin a child subreaper (prctl
// PR_SET_CHILD_SUBREAPER), so an orphaned descendant is re-parented to kin
// instead of init and stays where kin can find it. An [Owner] is one program
// kin started; its processes are the leader's descendants (recorded by
// [Owner.Snapshot] while they are still below it) and, for a tagged owner,
// every process below kin that carries the owner's marker variable in its
// environment (inherited across setsid and forks, so it finds what was
// re-parented to kin after the leader exited). Elsewhere there is no /proc
// and no subreaper: the package does nothing and the caller's process-group
// handling is all there is.
//
// It must never signal a process that is not (by pid and start time) one it
// attributed to an owner, never wait for a child that kin started itself
// (os/exec waits for those; a blanket wait4(-1) would steal their exit
// status), and never reap a pid it has not checked is a zombie child of kin
// under its lock (so a reaped pid's reuse cannot be mistaken for it).
//
// Out of reach: a process that clears its environment and leaves the tree
// before a snapshot (kin's [Shutdown] still stops it, as it is then below
// kin), a process that escapes to another subreaper or is run by another
// user, and everything when kin itself is killed with SIGKILL (nothing runs;
// the orphans go to init).
package reaper
