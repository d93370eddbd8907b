package chat

import (
	"testing"
)

// @server:uri attaches a resource of a server kin listed; a server it did
// not list, a word without a URI, and a repeat do not.
func TestResourceMentions(t *testing.T) {
	servers := map[string]bool{"notes": true}
	got := resourceMentions("compare @notes:notes://readme, @notes:notes://readme @ghost:x://y @notes:plain @ana", servers)
	if len(got) != 1 || got[0].Type != "resource" || got[0].Server != "notes" || got[0].URI != "notes://readme" {
		t.Fatalf("mentions %+v", got)
	}
	p := withResources(turnStartParams{SessionID: "s", Input: "see @notes:notes://kin/design"}, "see @notes:notes://kin/design", servers)
	if p.Input != "" || len(p.Parts) != 2 || p.Parts[0].Text != "see @notes:notes://kin/design" || p.Parts[1].URI != "notes://kin/design" {
		t.Fatalf("params %+v", p)
	}
	if p := withResources(turnStartParams{SessionID: "s", Input: "plain"}, "plain", servers); p.Input != "plain" || p.Parts != nil {
		t.Fatalf("a question without mentions changed: %+v", p)
	}
	c := newCompleter(t.TempDir())
	c.setResources([]string{"notes:notes://big", "notes:notes://readme"}, nil)
	if got, n := c.Do([]rune("see @notes:notes://r"), 20); len(got) != 1 || string(got[0]) != "eadme " || n != 0 && n != len("notes:notes://r") {
		t.Fatalf("completion %q %d", got, n)
	}
}
