package agent

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/tool"
)

type briefed struct {
	tool.Static
	briefs []tool.Brief
}

func (b briefed) Briefs() []tool.Brief { return b.briefs }

// Servers' instructions go to the model each framed and capped at 4 KiB,
// all of them at 16 KiB: the servers past that are named, not sent.
func TestServerInstructionsAreFramedAndCapped(t *testing.T) {
	m := modeltest.New()
	defer m.Close()
	var briefs []tool.Brief
	for i := range 6 {
		briefs = append(briefs, tool.Brief{Server: fmt.Sprintf("s%d", i), Text: fmt.Sprintf("server %d says: ", i) + strings.Repeat("x", 5000)})
	}
	rec := &screen{events: events{done: make(chan TurnDone, 8)}}
	svc := New(Options{Home: t.TempDir(), Model: model.Config{APIKey: "k", BaseURL: m.URL(), Model: "mock"},
		Tools: briefed{Static: tool.Static(builtin.Tools(builtin.Options{})), briefs: briefs}, Events: rec})
	defer svc.Shutdown()
	s, _ := svc.NewSession(SessionOptions{Roots: []string{workspace(t)}})
	m.Script(modeltest.Reply{Text: []string{"ok"}})
	if d := ask(t, svc, rec, s.Info.SessionID, TextInput("hi")); d.Status != TurnCompleted {
		t.Fatalf("%+v", d)
	}
	instr := m.Requests()[0].Instructions
	sent := strings.Count(instr, "<untrusted-mcp-instructions server=")
	if sent < 3 || sent > 4 || strings.Count(instr, "[kin: cut here") != sent {
		t.Fatalf("%d servers sent, %d cut", sent, strings.Count(instr, "[kin: cut here"))
	}
	if !strings.Contains(instr, "[kin: the instructions of MCP servers ") || !strings.Contains(instr, "s5") {
		t.Fatalf("the servers left out are not named:\n%s", instr[len(instr)-400:])
	}
	if strings.Count(instr, "xxxx")*4 > 16<<10 {
		t.Fatalf("over the total cap: %d x", strings.Count(instr, "x"))
	}
}
