package agent

import (
	"encoding/json"
	"slices"

	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/skills"
	"github.com/kin-dev/kin/agent/tool"
)

// skillLoad is a use_skill call that loaded a skill, as the conversation
// records it: what a kin that resumes the session loads again, so that a
// skill the model still has loaded narrows and grants after a restart as it
// did before.
type skillLoad struct{ turn, name string }

// noteSkillLoad notes the result r of the call at items[call] when it
// loaded a skill (a use_skill call without file that completed).
func (c *convo) noteSkillLoad(call int, r session.Record) {
	it := c.items[call]
	if it.name != SkillToolName || r.Status != string(tool.StatusCompleted) {
		return
	}
	var args struct {
		Name string `json:"name"`
		File string `json:"file"`
	}
	if json.Unmarshal([]byte(it.text), &args) != nil || args.Name == "" || args.File != "" {
		return
	}
	c.skillLoads = append(c.skillLoads, skillLoad{turn: r.TurnID, name: args.Name})
}

// restoreSkills loads again, at the first turn this kin runs on a session,
// the skills the conversation loaded before (in an earlier kin): without
// it a restart silently lifted a loaded skill's allowed-tools, while the
// model still read the skill and kin's word that calls of other tools are
// asked. Each is loaded as the session's folders bring it now (t.ext): a
// skill gone since is not loaded; one no longer trusted only narrows (its
// folder is not granted); an MCP server's skill narrows, but its files are
// read only after the model loads it again (the entry it was loaded from,
// which they are checked against, is not on record).
func (t *turn) restoreSkills() {
	sess := t.sess
	sess.mu.Lock()
	done := sess.skillsRestored || sess.lineage != nil
	sess.skillsRestored = true
	sess.mu.Unlock()
	if done {
		return
	}
	c, err := sess.conversation()
	if err != nil {
		return
	}
	sess.wmu.Lock()
	loads := slices.Clone(c.skillLoads)
	sess.wmu.Unlock()
	if len(loads) == 0 {
		return
	}
	mcp := t.svc.mcpSkills()
	usable := t.ext.usable()
	var restored []loadedSkill
	for _, l := range loads {
		if i := slices.IndexFunc(mcp, func(m MCPSkill) bool { return m.Command() == l.name }); i >= 0 {
			restored = append(restored, loadedSkill{name: l.name, allowed: kinTools(mcp[i].AllowedTools), turn: l.turn})
			continue
		}
		named := func(sk skills.Skill) bool { return sk.Name == l.name }
		if i := slices.IndexFunc(usable, named); i >= 0 {
			restored = append(restored, loadedSkill{name: l.name, dir: usable[i].Dir, allowed: kinTools(usable[i].AllowedTools), turn: l.turn})
		} else if i := slices.IndexFunc(t.ext.skills.Skills, named); i >= 0 {
			// A repository's skill not trusted with its current content:
			// its folder is not granted, but its allowed-tools narrow (they
			// only ever make kin ask more), since the model still reads it.
			restored = append(restored, loadedSkill{name: l.name, allowed: kinTools(t.ext.skills.Skills[i].AllowedTools), turn: l.turn})
		}
	}
	sess.mu.Lock()
	// before what this kin loaded since (nothing, at its first turn)
	sess.loaded = append(restored, sess.loaded...)
	sess.mu.Unlock()
}
