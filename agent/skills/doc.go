// Package skills finds and reads Agent Skills: folders holding a SKILL.md
// whose YAML front matter names the skill and says when to use it (the
// open format of agentskills.io that Claude Code, Codex, Copilot, Gemini
// CLI and others read), so that a person's skills work in kin unchanged.
//
// Skills are found in $KIN_HOME/skills and ~/.agents/skills (the person's
// own) and, in each workspace folder, .agents/skills and .claude/skills
// (the repository's). On a name clash the nearest wins: a repository's
// over the person's, .agents over .claude, ~/.agents over $KIN_HOME; every
// clash is listed (Found.Clashes), never silently resolved.
//
// Each skill's digest covers every file of its folder (names and
// contents; a symlink by its target, never followed), bounded as the MCP
// Skills extension bounds a skill (512 files, 16 MiB): a repository's
// skill is trusted by that digest (package ledger), so a changed file is
// a changed skill. Only the name and the description (capped) reach the
// model's instructions; the body and the files are read when the model
// loads the skill (package agent's use_skill), after the digest is checked
// again.
//
// What this package must never do: run anything (a skill's scripts run
// only through bash, with the usual approval); read outside a skill's
// folder (each folder is walked through an os.Root, so a symlink cannot
// lead out); treat allowed-tools as a grant (it is parsed for the agent,
// which only narrows with it); decide whether a skill is trusted (the
// ledger does, asked by package agent).
package skills
