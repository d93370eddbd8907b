package acp

import (
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// A client hears that kin summarised the conversation: compaction_update
// (in_progress, then completed with the summary the model goes on from)
// when it advertised session.compaction; a notice when it takes notices;
// else a short agent message in the prompt's answer. Never twice.
func TestClientsHearOfCompaction(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps map[string]any
	}{
		{"compaction", map[string]any{"session": map[string]any{"compaction": map[string]any{}, "notices": map[string]any{}}}},
		{"notices", map[string]any{"session": map[string]any{"notices": map[string]any{}}}},
		{"neither", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.settings(`{"models":[{"id":"small","contextWindow":10000}]}`)
			c := w.connect(nil)
			c.initialize(tc.caps)
			sid := c.newSession()
			w.model.Script(
				modeltest.Reply{Text: []string{"A long first answer."}, Usage: modeltest.Usage{Input: 9000, Output: 200}},
				modeltest.Reply{Text: []string{"## Goal\nSummarised."}},
				modeltest.Reply{Text: []string{"Second answer."}},
			)
			c.prompt(sid, text("first question"))
			c.prompt(sid, text("second question")) // past 80% of the window: summarised first

			var said []string
			for _, u := range c.updates(UpdateAgentMessage) {
				if s := u["content"].(map[string]any)["text"].(string); strings.Contains(s, "kin summarised") {
					said = append(said, s)
				}
			}
			comps := c.updates(UpdateCompaction)
			notices := 0
			for _, n := range c.updates(UpdateNotice) {
				if strings.Contains(n["title"].(string), "kin summarised") {
					notices++
				}
			}
			switch tc.name {
			case "compaction":
				if len(comps) != 2 || comps[0]["status"] != "in_progress" || comps[1]["status"] != "completed" || comps[0]["compactionId"] != comps[1]["compactionId"] {
					t.Fatalf("compaction updates %v", comps)
				}
				sum := comps[1]["summary"].([]any)[0].(map[string]any)
				if sum["text"] != "## Goal\nSummarised." {
					t.Errorf("the summary shown: %v", sum)
				}
				if notices != 0 || len(said) != 0 {
					t.Errorf("told twice: %d notices, %d messages", notices, len(said))
				}
			case "notices":
				if len(comps) != 0 || notices != 1 || len(said) != 0 {
					t.Errorf("%d compaction updates, %d notices, %d messages", len(comps), notices, len(said))
				}
			default:
				if len(comps) != 0 || notices != 0 || len(said) != 1 {
					t.Errorf("%d compaction updates, %d notices, messages %q", len(comps), notices, said)
				}
			}
		})
	}
}

// /compact tells a client that takes compaction updates the same way.
func TestCompactCommandIsACompactionUpdate(t *testing.T) {
	w := newWorld(t)
	c := w.connect(nil)
	c.initialize(map[string]any{"session": map[string]any{"compaction": map[string]any{}}})
	sid := c.newSession()
	w.model.Script(
		modeltest.Reply{Text: []string{"An answer."}},
		modeltest.Reply{Text: []string{"## Goal\nOn request."}},
	)
	c.prompt(sid, text("a question"))
	if res := c.prompt(sid, text("/compact")); res.StopReason != StopEndTurn {
		t.Fatalf("/compact: %q", res.StopReason)
	}
	comps := c.updates(UpdateCompaction)
	if len(comps) != 2 || comps[1]["status"] != "completed" || comps[1]["_meta"].(map[string]any)["kin"].(map[string]any)["reason"] != "requested" {
		t.Errorf("compaction updates %v", comps)
	}
}
