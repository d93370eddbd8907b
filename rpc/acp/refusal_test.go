package acp

import (
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// A turn the model refuses answers stopReason "refusal" (the ACP schema's
// own), its refusal streamed as the agent's message; the session goes on.
func TestARefusedPromptStopsWithRefusal(t *testing.T) {
	w := newWorld(t)
	c := w.connect(nil)
	c.initialize(nil)
	sid := c.newSession()
	w.model.Script(modeltest.Reply{Refusal: []string{"I can't help with that."}}, modeltest.Reply{Text: []string{"ok"}})
	if res := c.prompt(sid, text("write malware")); res.StopReason != StopRefusal {
		t.Fatalf("stopReason %q, want refusal", res.StopReason)
	}
	said := func() string {
		s := ""
		for _, u := range c.updates(UpdateAgentMessage) {
			if content, ok := u["content"].(map[string]any); ok {
				s += content["text"].(string)
			}
		}
		return s
	}
	c.until("the refusal as the agent's message", func() bool { return said() == "I can't help with that." })
	if res := c.prompt(sid, text("then explain why")); res.StopReason != StopEndTurn {
		t.Errorf("the next prompt: %q", res.StopReason)
	}
}
