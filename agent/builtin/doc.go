// Package builtin is kin's own set of coding tools: read_file, list_dir and
// search read the workspace; write_file and edit_file change files; bash runs
// shell commands. [Tools] returns them as [tool.Tool] values for the turn
// loop, next to the MCP tools.
//
// Every tool works the same way: Prepare checks the arguments strictly (no
// unknown fields, right types, required fields present) and works out exactly
// what the call would do; the returned Action's Approval says so to the
// person, and Run does that and nothing else.
//
// What this package must never do:
//
//   - Never write a file or run a command except from the Run of an Action
//     whose Approval the person (or a grant they gave) approved: Prepare only
//     reads. write_file and edit_file write exactly the content their diff
//     showed, and refuse when the file changed in between.
//   - Never decide a path rule of its own: the trust boundary (package
//     boundary, [tool.Env].Workspace) decides. A path that leaves the roots,
//     lexically ("..", an absolute path elsewhere) or through a symlink
//     anywhere along it, is refused by the read tools; a secret ($KIN_HOME,
//     credentials, .env files, private keys) is read only after the person
//     approves that read, and search skips secrets; writes outside the
//     roots, to secrets and to the files that make things run later are
//     always asked for (no "always allow", no mode); a command's sandbox
//     protection is computed by the boundary, and a command it cannot fully
//     protect is always asked. Commands never get kin's model keys.
//   - Never offer "always allow" for a whole shell: a bash grant covers one
//     simple command's program (and subcommand), never a pipeline, a list,
//     a redirection, a substitution or a wrapper such as sudo or sh.
//   - Never leave a command running after its call: on timeout or cancel the
//     whole process group is killed and reaped (and, when confined, its PID
//     namespace with everything in it).
//   - Never run a command other than its approval said: confined by the
//     policy it showed (package sandbox), with network only when it showed
//     network, unconfined only when it said "unconfined", and not at all
//     when the person required a sandbox and there is none.
//   - Never panic on bad input: bad arguments are Prepare errors, other
//     problems (missing files, binary content, huge output) are failed or
//     limited results.
package builtin
