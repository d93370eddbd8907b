package chat

import (
	"testing"

	"github.com/yosida95/uritemplate/v3"

	"github.com/kin-dev/kin/rpc"
)

// The URI a template makes is the editors' (editors/vscode's
// resourceTemplates.test.ts cases): values percent-encoded as their UTF-8
// bytes, reserved characters kept only by + and #.
func TestExpandTemplate(t *testing.T) {
	for _, c := range []struct {
		tmpl string
		vals map[string]string
		want string
	}{
		{"notes://{project}/{note}", map[string]string{"project": "my proj", "note": "d/é"}, "notes://my%20proj/d%2F%C3%A9"},
		{"file:///{+path}", map[string]string{"path": "a/b c"}, "file:///a/b%20c"},
		{"search://x{?q,lang}", map[string]string{"q": "café 😀", "lang": "en"}, "search://x?q=caf%C3%A9%20%F0%9F%98%80&lang=en"},
		{"db://{table}{/id}", map[string]string{"table": "t"}, "db://t"},
	} {
		tm, err := uritemplate.New(c.tmpl)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := expandTemplate(tm, c.vals); err != nil || got != c.want {
			t.Errorf("%s %v: %q, %v; want %q", c.tmpl, c.vals, got, err, c.want)
		}
	}
}

// Tab at a template's variable completes the whole line with the server's
// values that start with it (completion/complete with the values chosen
// before); after /template, Tab completes the listed templates.
func TestTemplateCompletion(t *testing.T) {
	var asked []string
	q := &templateQuestion{server: "notes", template: "notes://{project}/{note}", name: "note", chosen: map[string]string{"project": "kin"},
		call: func(method string, params, out any) error {
			p := params.(rpcCompletionParams)
			asked = append(asked, method+" "+p.Argument.Name+"="+p.Argument.Value+" project="+p.Context.Arguments["project"])
			out.(*rpcCompletionResult).Completion.Values = []string{"design", "plan", "draft-design"}
			return nil
		}}
	c := newCompleter(t.TempDir())
	c.setQuestion(q)
	got, n := c.Do([]rune("d"), 1)
	if len(got) != 2 || string(got[0]) != "esign" || string(got[1]) != "raft-design" || n != 1 {
		t.Errorf("completion %q %d", got, n)
	}
	if len(asked) != 1 || asked[0] != "completion/complete note=d project=kin" {
		t.Errorf("asked %q", asked)
	}
	c.setQuestion(nil)
	c.setResources(nil, []string{"notes:notes://{project}/{note}", "web:https://{host}/{+path}"})
	if got, _ := c.Do([]rune("/template @no"), 13); len(got) != 1 || string(got[0]) != "tes:notes://{project}/{note} " {
		t.Errorf("template words %q", got)
	}
}

type (
	rpcCompletionParams = rpc.CompletionCompleteParams
	rpcCompletionResult = rpc.CompletionCompleteResult
)
