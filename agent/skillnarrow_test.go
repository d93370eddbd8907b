package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// The attack: a loaded skill's allowed-tools (here read_file and delegate)
// make every other call of the session asked, whatever the auto-edit mode
// or a grant would do. The model, under the skill, hands the edit to a
// subagent in auto-edit mode instead: the subagent's session had no
// skill loaded, so its write_file was applied without asking. A call of a
// subagent is narrowed by the skills its parents loaded too (here the
// person denies it, and nothing is written).
func TestASubagentIsNarrowedByItsParentsSkill(t *testing.T) {
	home := t.TempDir()
	svc, m, rec, a, ws, sid := readOnlySkillSession(t, home, "read_file delegate")
	task := "subagent: write the file"
	args, _ := json.Marshal(map[string]string{"task": task, "mode": "auto-edit"})
	write, _ := json.Marshal(map[string]string{"path": "out.txt", "content": "written\n"})
	m.Route(modeltest.FirstUser(task),
		modeltest.Reply{Calls: []modeltest.Call{{ID: "w1", Name: "write_file", Arguments: string(write)}}},
		modeltest.Reply{Text: []string{"tried"}})
	m.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "s1", Name: SkillToolName, Arguments: `{"name":"read-only-review"}`}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "d1", Name: DelegateToolName, Arguments: string(args)}}},
		modeltest.Reply{Text: []string{"done"}},
	)
	if _, err := svc.StartTurn(sid, TextInput("review it"), nil); err != nil {
		t.Fatal(err)
	}
	for d := (TurnDone{}); d.SessionID != sid; {
		d = waitDone(t, rec.events)
	}
	if _, err := os.Stat(filepath.Join(ws, "out.txt")); err == nil {
		t.Error("the subagent wrote out.txt without asking, under its parent's skill that leaves write_file out")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	asked := false
	for _, r := range a.asked {
		if r.ToolName == "write_file" {
			asked = true
		}
	}
	if !asked {
		t.Errorf("the subagent's write_file was not asked: %+v", a.asked)
	}
}
