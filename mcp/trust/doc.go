// Package trust is kin's persistent record of the MCP server launches a
// person chose to trust ("Trust server"), kept in the launches section of
// kin's one trust ledger, <KIN_HOME>/trust.json (package ledger, mode 0600;
// earlier kins' mcp_trust.json is carried over into it without asking
// again).
//
// A grant binds to what runs and where (the trust boundary's rule, package
// boundary): a Launch is the server's name and scope, the project folder for
// a project's (or an ACP client's) server, the hash of its launch fields
// (transport, command, args, url, env: the expanded values), the program it
// runs, resolved, the folder it starts in, and the content digest of every
// file inside the project it runs (sh ./srv.sh, node server.js). Any change
// to any of them is another launch, which asks again: the rug-pull defence,
// and the reason a repository that copies a trusted project entry, or
// brings its own srv.sh under a trusted launch line, is asked about
// before anything of it runs. Which of the person's variables its headers
// send (${VAR} names as written, not their values) is part of it too, so a
// header that starts sending another variable asks again while a rotated
// token does not. Timeout, disabled, allowed_tools, header values and auth
// are not part of a launch.
//
// A grant also keeps the read-only tools the person let run without
// asking: those the launch approval listed, or, when kin had not seen the
// server's tools yet, those of the first connection after the grant (a
// notice lists them). A tool that declares itself read-only later is asked
// about on every call.
//
// The first release keyed grants by server name and launch hash only
// (version 1). Such a grant of a global server is the same launch and is
// carried over without asking; one of a project's server lacked the project
// and is asked again.
//
// The store must never hold or display a secret: it records hashes,
// digests, paths, the masked display line (config.Server.Display) and times,
// never env values, headers or unmasked URLs. "Allow once" decisions are not
// stored here.
package trust
