// Package hooks runs the person's and a project's hooks: commands kin
// runs at fixed points of a session, with Claude Code's input and output
// contract, so that hooks written for Claude Code (and Codex, Copilot,
// Goose and Cline, which follow it) work in kin unchanged.
//
// Events: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop.
// A hook gets JSON on stdin (session_id, transcript_path, cwd,
// permission_mode, hook_event_name, and the event's own fields: prompt,
// tool_name, tool_input, tool_response, tool_use_id, stop_hook_active,
// source). It answers with its exit code and output: 0 is success (stdout
// may be JSON; for SessionStart and UserPromptSubmit plain text is context
// for the model), 2 blocks with stderr as the reason, any other code is a
// failure that is reported and blocks nothing. JSON output may carry
// decision and reason ("block"; PreToolUse's legacy "approve"),
// hookSpecificOutput.permissionDecision (allow, deny or ask) with
// permissionDecisionReason, hookSpecificOutput.additionalContext,
// PreToolUse's hookSpecificOutput.updatedInput (the person's hooks only:
// the turn replaces the call's input with it, then checks the changed call
// as the model's), continue:false with stopReason, systemMessage, and
// suppressOutput (read; kin never shows a hook's stdout to the person).
//
// Hooks are configured as Claude Code configures them: {"hooks": {"<Event>":
// [{"matcher": "<tool names>", "hooks": [{"type": "command", "command":
// "...", "timeout": <seconds>}]}]}}, in $KIN_HOME/settings.json (the
// person's own), and in a project's .kin/hooks.json, .claude/settings.json
// and .claude/settings.local.json (the project's). Matchers name tools as
// Claude Code does or as kin does: Bash is bash, Read read_file, Write
// write_file, Edit and MultiEdit edit_file, Grep and Glob search, LS
// list_dir; mcp__server__tool as it is; "" and "*" match every tool, and
// any other matcher is a regular expression over the whole name. A hook
// sees Claude Code's tool name (tool_name) and kin's (kin_tool_name), and
// for file tools tool_input.file_path beside kin's path.
//
// Besides commands, Claude Code's other hook types run. A prompt
// hook ({"type": "prompt", "prompt": "...", "model": "...", "timeout": s};
// not at SessionStart) is one request to the session's model service (the
// caller's Asker: its client, the spend limits, its usage counted), with
// kin's instructions (prompt.md) and the prompt with the input JSON for
// $ARGUMENTS (after it when it has none); the model answers {"ok": true}
// or {"ok": false, "reason": "..."} (Stop: "impossible": true lets the
// model stop), and ok:false blocks as exit 2 does. An http hook ({"type":
// "http", "url": "...", "headers": {...}, "allowedEnvVars": [...],
// "timeout": s}) POSTs the input JSON to an http or https URL, follows no
// redirect, and reads a 2xx answer's body as a command's stdout with exit
// code 0; header values expand $VAR and ${VAR} only for the names
// allowedEnvVars lists, from the command environment (no model key).
// Both time out at 30 seconds unless the entry says otherwise. An agent
// hook ({"type": "agent", "prompt": "...", "model": "...", "timeout": s;
// not at SessionStart) is a prompt hook whose judge may read first: the
// caller's AgentAsker runs a short conversation (package agent: kin's
// read-only file tools only, within the session's trust boundary, nothing
// that would ask the person, no hook for its own calls, nothing stored),
// this package checks the spend limits before each request, stops it at
// its timeout (60 seconds by default) or after MaxAgentRequests requests,
// and reads its last answer as a prompt hook's verdict.
//
// What this package must never do (the trust boundary's rules, package
// boundary, and the ledger's, package ledger):
//
//   - Never let a project's hook approve or change a call: its "allow" and
//     its updatedInput are ignored (and said so); it may deny, ask or add
//     context. Only the person's own hooks may allow or change a call, and
//     no hook allows past a call that must always ask.
//   - Never run a hook outside the command rules: confined by the sandbox
//     with the policy commands get (no network; kin's home hidden but its
//     hooks folder), kin's model keys taken out of its environment, bounded
//     by its timeout, its process group killed when it ends.
//   - Never block because a hook failed or hung: a failure or a timeout is
//     reported and blocks nothing unless the hook said to block. A prompt
//     or agent hook's answer that is not a clear {"ok": ...} (or an agent
//     hook's judge that gives none), an http hook's answer that is not 2xx
//     (a redirect included), fail the same way.
//   - Never send a secret the person did not name: a prompt hook's request
//     carries only kin's instructions, the prompt and the hook's input (an
//     agent hook's judge also what it read, as the model may read it: no
//     secret, nothing outside the workspace); an http hook's headers expand only the variables its entry allows, never
//     a model key, and their values appear in no notice or error (the URL
//     only masked). With the built binary:
//     TestHostileProjectHTTPHookSendsOnlyOnceTrustedAndNeverTheModelKey.
//   - Never decide whether a project's hook is trusted: the caller (package
//     agent) checks the ledger before it runs one, by the digest Load
//     computed from its entry and the project's script it runs.
package hooks
