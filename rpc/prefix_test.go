package rpc_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// TestRequestPrefixIsStable: two consecutive requests of a turn (before
// and after a tool call) and the next turn's first one start alike, byte
// for byte: the same instructions, the same tool definitions, the same
// prompt_cache_key, and every input item of the earlier request again, in
// order, at the start of the later one. That is what services' prompt
// caches need to hit.
func TestRequestPrefixIsStable(t *testing.T) {
	e := newEnv(t)
	ed, sid := e.editor()
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "list_dir", Arguments: `{}`}}},
		modeltest.Reply{Text: []string{"listed"}},
		modeltest.Reply{Text: []string{"again"}},
	)
	completed(ed, start(t, ed, sid, "list the folder"))
	completed(ed, start(t, ed, sid, "and again"))
	reqs := e.Model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	parse := func(raw []byte) (map[string]json.RawMessage, []json.RawMessage) {
		var body map[string]json.RawMessage
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Fatal(err)
		}
		var input []json.RawMessage
		if err := json.Unmarshal(body["input"], &input); err != nil {
			t.Fatal(err)
		}
		return body, input
	}
	for i := 1; i < len(reqs); i++ {
		a, ain := parse(reqs[i-1].Raw)
		b, bin := parse(reqs[i].Raw)
		for _, k := range []string{"instructions", "tools", "prompt_cache_key"} {
			if len(a[k]) == 0 || !bytes.Equal(a[k], b[k]) {
				t.Errorf("requests %d and %d: %s differs (%d and %d bytes)", i-1, i, k, len(a[k]), len(b[k]))
			}
		}
		if len(bin) <= len(ain) {
			t.Fatalf("request %d has %d input items, request %d %d", i, len(bin), i-1, len(ain))
		}
		for j := range ain {
			if !bytes.Equal(ain[j], bin[j]) {
				t.Errorf("requests %d and %d: input item %d differs:\n%s\n%s", i-1, i, j, ain[j], bin[j])
			}
		}
	}
	var key string
	first, _ := parse(reqs[0].Raw)
	json.Unmarshal(first["prompt_cache_key"], &key)
	if !strings.HasPrefix(key, "kin-") || strings.Contains(key, sid) {
		t.Errorf("prompt_cache_key %q", key)
	}
}
