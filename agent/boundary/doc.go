// Package boundary is kin's trust boundary: the one place that decides what
// crosses from someone else into kin's actions. Every feature asks it: the
// built-in tools (read_file, list_dir, search, write_file, edit_file, bash),
// the permission gate and the modes (through the approvals the tools
// build), undo, the sandbox, the instructions loader, input parts, ACP's
// fs/* access and MCP launch trust. A feature never keeps its own list of
// paths, secrets or keys.
//
// This comment is the threat model. README's security sections say the
// same to a person; each rule names the tests that show it holds.
//
// # Who may be hostile, and what they can do
//
//   - A repository's files: anything in the workspace, written by whoever
//     wrote the repository or by a command kin ran. Instructions text,
//     symlinks anywhere, .kin/mcp.json and scripts it names, git's internals,
//     node_modules, trees too large to look at.
//   - The model's output: any tool call with any arguments (paths with "..",
//     absolute paths, paths through symlinks it made), any command (run
//     confined where there is a sandbox), content that mimics the person's
//     files.
//   - An MCP server: its tools, descriptions and annotations (readOnlyHint),
//     results and questions.
//   - A server an ACP client supplies for a session: as an MCP server, and
//     chosen by the client, not in kin's configuration.
//   - A careless setting: the home folder (or /) as the workspace,
//     autoApproveSandboxedCommands with the auto-edit mode, "sandbox": "off",
//     a model's apiKeyEnv, an MCP entry that names a model key.
//
// # The rules, and the tests that show them
//
// Paths are resolved beneath a root, at the moment of use (roots.go). One
// os.Root per workspace folder, opened once (NewWorkspace) and shared by
// every session with that folder; Open, Stat, Lstat, ReadFile, ReadDir,
// WriteFile and Remove go through it (package files does all its disk I/O
// here), so a symlink is followed only while it stays inside, whenever it
// was swapped in; only regular files and folders are opened (a FIFO a
// command left is refused, never waited on), and ReadFileUpTo reads what a
// command may have made huge with a limit (TestOpenRefusesAFIFOAndReadFileUpToAHugeFile). A path outside every folder (a write the person approved
// as such) is resolved beneath its nearest existing folder. Undo asks
// Unchanged first and refuses, saying so, a path that no longer names the
// file kin changed; a write handed to an ACP client (which follows
// symlinks) asks StillReal first, TestStillReal. Tests: TestResolverRefusesASymlinkOut,
// TestResolverFollowsSymlinksThatStayInside,
// TestResolverHoldsWhileASymlinkIsSwapped, TestRootThatIsASymlink,
// TestResolveConfinesLexicallyAndThroughSymlinks, TestUnchanged,
// TestWriteOutsideTheRootsStaysInItsFolder, and with the built binary
// TestHostileFinding02UndoDoesNotFollowASwappedSymlink.
//
// One list of files that make things run later (runslater.go): .git (by
// an allow-list for commands), .kin/, .mcp.json, .claude/, .agents/, .vscode/,
// .idea/, .github/workflows/, .husky/, .pre-commit-config.yaml,
// .gitmodules, .envrc, AGENTS.md, CLAUDE.md (and ssh's authorized_keys and known_hosts). The auto-edit mode
// and every grant always ask before kin's tools write any of them
// (RunsLater). For commands, Protect computes once per command what the
// sandbox renders: in every git folder (the workspace's, nested
// repositories', a worktree's, the common folder, the folder a symlinked
// .git points to) everything but what git add, commit, fetch, merge and
// rebase write is read-only and the folder is pinned; config, config.worktree,
// hooks, gitdir, info and modules cannot be created (a read-only
// placeholder while the command runs); commondir, whose mere existence git
// cannot do without, is seeded with the git folder itself; a submodule's
// missing .git cannot be planted (every gitlink an index records, which
// git status enters whatever .gitmodules says, and every path .gitmodules
// names: gitlinks.go; past 200 of them a gap, each placeholder being a
// mount of the command's start); the rest of the list is read-only where
// it exists and impossible to create where it does not; secret-looking
// files are read-only. The walk reuses what it found in a folder whose
// identity and times are unchanged since (walkcache.go; a folder changed
// within a second of being read is read again, and only file systems that
// keep folders' times are trusted): TestAWalkSeesEveryChange plants,
// swaps and removes between walks. Where the protection is incomplete (the walk cut
// short at ProtectMaxEntries or ProtectMaxFolders, a protected name that is a symlink,
// a .git file, commondir, .gitmodules or index kin cannot read: a FIFO, a
// sparse terabyte, an index it does not know; more protected paths than a
// command's sandbox can mount, MaxProtectedMounts, secret-named files left
// out first: bound.go) the
// command fails closed: always asked, never by a mode or a grant, and the
// approval says why. Tests: TestRunsLater, TestProtectGitByAllowList,
// TestProtectNestedWorktreeSubmoduleSymlink,
// TestProtectSaysWhenTheWalkIsCutShort,
// TestProtectUnreadableGitFilesFailClosed,
// TestProtectGitlinksWhateverGitmodulesSays,
// TestProtectAnUnreadableIndexIsAGap, TestProtectTooManySubmodulesAreAGap,
// TestProtectASymlinkAlongAProtectedPathIsAGap,
// TestProtectStaysWithinTheMountsACommandCanHave, and with the built binary and real
// bubblewrap TestHostileFinding01GitInternalsCannotRunCodeLater,
// TestHostileGitlinkWithoutGitmodulesCannotBePlanted,
// TestHostileThousandsOfProtectedPathsStillLetCommandsRun,
// TestHostileRenamingTheFolderAboveAProtectedPath (package sandbox pins
// every folder above a protected path: a mount goes with a renamed
// folder),
// TestHostileFinding01SymlinkedGitFailsClosed,
// TestHostileFinding06AutoEditAsksBeforeFilesThatRunLater,
// TestHostileFinding11MissingProtectedPathsCannotBeCreated,
// TestHostileFinding15ProtectionWalkCutShortFailsClosed,
// TestHostileALargeWorkspaceIsConfinedNotAsked.
//
// Secrets are never read unasked, wherever the roots are (secrets.go):
// $KIN_HOME, the person's credentials (~/.ssh, ~/.aws, ~/.config/gh,
// ~/.netrc, ~/.docker, ~/.kube, ~/.gnupg, keyrings...), files whose names
// say they hold secrets (.env, keys, credentials files, .git/config with its
// clone URLs) and files whose content is a private key. read_file, list_dir
// of such a folder and search of such a path ask each time; search skips
// them elsewhere and walks never enter credential folders; a file part or
// an ACP resource link that is a secret is refused; an instructions file
// that leads to one is not read; commands cannot see the credential folders
// (Hidden). A session whose folder is the home folder or / is told so when
// it starts (Notice). Tests: TestSecrets, TestWorkspaceNotice,
// TestHostileFinding04HomeAsWorkspaceSendsNoSecrets,
// TestHostileFinding09And12InstructionsSymlinksAndFrames.
//
// A session's git worktree, $KIN_HOME/worktrees/<session> (worktree.go),
// is that session's workspace root and not one of kin's secrets (its
// secret-looking files still are; to every other session it is kin's
// home). Its git folder in the repository and the repository's common
// .git are writable to its commands, so they can commit, and protected
// like any .git: config, hooks and the rest read-only or impossible to
// create, both pinned. Tests: TestKinWorktreeIsAWorkspaceNotASecret,
// TestProtectKinWorktreeGitFolders, and with the built binary
// TestWorktreeBinary*.
//
// Every model key stays kin's (env.go): OPENAI_API_KEY and every apiKeyEnv
// of settings.json are taken out of every command's environment
// (CommandEnv), never expand into an MCP server's configuration, and are
// erased from kin's own /proc/<pid>/environ at start (ScrubEnviron). Tests:
// TestModelKeysAreStripped, TestHostileFinding05And13ModelKeysReachNoCommand.
//
// Credentials in URLs are masked wherever kin reports one (url.go:
// initialize's model.baseUrl, traces, MCP displays, kin chat); an #anchor
// is no secret. Tests: TestMaskURL,
// TestHostileFinding14BaseURLCredentialsAreMasked.
//
// Trust binds to what runs and where (launch.go; the grants are package
// mcp/trust's): the project, the resolved program, the folder it starts
// in, and the digest of every file of the project it runs. A global server
// run through a package runner (npx, uvx, bunx, pnpm dlx...) starts in
// LaunchFolder, outside every workspace. Tests (mcp/trust, mcp/manager):
// TestTrustBindsToTheProjectAndItsScripts,
// TestGlobalPackageRunnerStartsOutsideTheWorkspace, TestFirstReleaseGrants,
// TestReadOnlyToolsRunUnaskedOnlyForATrustedServer, and
// TestHostileFinding03RepositoryCannotReuseATrustedLaunch,
// TestHostileFinding03GlobalRunnerStartsOutsideTheWorkspace,
// TestHostileFinding07ReadOnlyHintOfAServerAllowedOnce.
//
// Instructions are bounded and framed (agent/instructions, agent's prompt,
// asking this package about secrets): a total cap, nearest first, what was
// left out told to the person and the model; symlinks must stay inside the
// roots and lead to no secret; no file can close or forge its frame.
// Tests: TestHostileFinding08InstructionsHaveATotalCap,
// TestHostileFinding09And12InstructionsSymlinksAndFrames.
//
// Someone else's text reaches the model framed (frame.go, the one place
// that writes such frames): an MCP server's instructions and the tool
// descriptions search_tools returns go between <untrusted-KIND
// server="NAME"> tags that say whose text it is and that it is data, never
// instructions; inside, every untrusted-frame tag (and its look-alikes)
// is escaped and every heading line marked, so the text can neither close
// its frame nor pass itself off as one of kin's sections; each is capped.
// A server's instructions are pinned with its trusted launch (package
// mcp/manager): changed ones are withheld until the person accepts that
// text. Tests: TestFrameNeutralisesAndCaps,
// TestSearchResultFramesDescriptions (agent/toolsearch), and (package
// rpc) TestMCPServerInstructionsArePinned.
//
// A skill's folder outside the roots is readable to read_file once the
// session loaded that skill, and nothing else outside them (GrantRead: the
// folder is opened as a root of its own; a folder that is or holds kin's
// home, the home folder or a credential folder is never granted; in it
// kin's home does not count as a secret but secret names still do). Tests
// (package rpc): TestSkillsAreListedLoadedAndNarrowOnly.
//
// What a repository or a server brings that runs or steers kin (its
// skills, hooks and instruction files; an MCP server's skills) is used only
// once the person trusted it, by its content's digest, in the one trust
// ledger beside this package (package ledger; package agent asks it;
// hooks run with the command rules: package hooks). Tests (package rpc):
// TestHostileRepositoryRunsNothingBeforeTrust,
// TestPersonHooksBlockAddContextAndTimeOut, TestMCPSkillsExtension,
// TestTrustListAndRevoke; package ledger: TestLaunchTrustIsMigrated.
//
// A workspace's commands have a tool cache of their own (FolderID names
// it; package sandbox's CacheFor). Tests: TestFolderID,
// TestHostileFinding10SandboxCacheIsPerWorkspace.
//
// # The fifteen findings of issue 29, and what closes each
//
//  1. Sandbox escape through .git: the allow-list, placeholders, the
//     seeded commondir, pins (Protect). TestHostileFinding01*.
//  2. Undo outside the workspace: the resolver and Unchanged.
//     TestHostileFinding02UndoDoesNotFollowASwappedSymlink.
//  3. A hostile repository runs its code: launch trust on project,
//     program, folder and script digests; runners start outside.
//     TestHostileFinding03*.
//  4. Home as the workspace: secrets asked, search skips them, the notice.
//     TestHostileFinding04HomeAsWorkspaceSendsNoSecrets.
//  5. A model's key in commands: every apiKeyEnv stripped.
//     TestHostileFinding05And13ModelKeysReachNoCommand.
//  6. Auto-edit writes files that run later: RunsLater always asks.
//     TestHostileFinding06AutoEditAsksBeforeFilesThatRunLater.
//  7. readOnlyHint of a server allowed once: no read-only allowance unless
//     trusted, and only for the tools listed.
//     TestHostileFinding07ReadOnlyHintOfAServerAllowedOnce.
//  8. No total cap on instructions. TestHostileFinding08InstructionsHaveATotalCap.
//  9. AGENTS.md symlinked to a secret.
//     TestHostileFinding09And12InstructionsSymlinksAndFrames.
//  10. One sandbox cache: per workspace. TestHostileFinding10SandboxCacheIsPerWorkspace.
//  11. Protected only when they exist: placeholders.
//     TestHostileFinding11MissingProtectedPathsCannotBeCreated.
//  12. AGENTS.md closes its frame: neutralised.
//     TestHostileFinding09And12InstructionsSymlinksAndFrames.
//  13. /proc/$PPID/environ holds the key: ScrubEnviron.
//     TestHostileFinding05And13ModelKeysReachNoCommand.
//  14. URL passwords and api-key values in initialize and :checkhealth:
//     MaskURL. TestHostileFinding14BaseURLCredentialsAreMasked.
//  15. The .env protection silently stops after 2,000 entries: fail
//     closed, said on the approval.
//     TestHostileFinding15ProtectionWalkCutShortFailsClosed.
//
// # What the boundary does not cover
//
//   - A command may make a new repository (or register a submodule in the
//     index and check it out) in a folder below the workspace's own: git
//     run there later reads that repository's config. kin protects the
//     repositories it sees before the command, and the workspace's own
//     .git cannot be made where there is none.
//   - Files outside the list that a person runs on their own (a Makefile, a
//     package.json script, any script) may be changed by a command.
//   - An unconfined command (no sandbox, or "sandbox": "off") can read and
//     change everything the person can: their credentials, settings.json,
//     other processes' environments (the editor's, if the key was exported
//     in its shell), and, where ptrace is allowed, kin's own memory. Only
//     kin's own environment block is scrubbed, and only on Linux.
//   - A confined command can read the workspace's own secret files (.env):
//     they are read-only to it, not hidden, since builds need them.
//   - A stdio MCP server runs in the command sandbox (package mcp/confine:
//     Hidden is this package's list, its writes only its state folder),
//     unless its entry says "sandbox": "off" or there is no sandbox: then
//     it runs as the person, and the launch approval says so. An http
//     server is not kin's to confine. Code a trusted project server loads
//     on its own (python -m, a require of another file) is not part of its
//     digest.
//   - An ACP client that writes through fs/write_text_file resolves the
//     path itself, after kin checked it beneath the roots.
//   - While a confined command runs, its placeholders (empty read-only
//     folders) are visible in the workspace; they are removed right after it
//     ends, in the background, and gone by the next command's walk and by
//     the end of the turn (a kin killed
//     with SIGKILL leaves them; a seeded commondir left behind names the
//     git folder itself, which git reads as none).
//   - A rebase or cherry-pick in progress (.git/rebase-merge, sequencer) is
//     writable: git runs what it lists only when the person continues it.
//
// # What this package must never do
//
// Import the wire (rpc), the agent loop or MCP: it is a leaf that they all
// ask (it uses only agent/settings and agent/lockedfile). Ask the person
// anything: it says what is inside, secret or protected and why; the
// callers build the approvals. Keep state beyond the opened roots.
package boundary
