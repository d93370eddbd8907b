package model

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestCallExtrasKeepTheNewest: the client keeps the extra_content of its
// last maxCallExtras calls, no more (a long session must not grow it).
func TestCallExtrasKeepTheNewest(t *testing.T) {
	var c callExtras
	for i := range maxCallExtras + 10 {
		c.put(fmt.Sprintf("call_%d", i), callExtra{content: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))})
	}
	c.put("call_last", callExtra{}) // nothing to keep: not kept
	if c.get("call_9").content != nil {
		t.Error("the oldest calls' extra_content was kept")
	}
	if raw := c.get(fmt.Sprintf("call_%d", maxCallExtras+9)).content; string(raw) != fmt.Sprintf(`{"n":%d}`, maxCallExtras+9) {
		t.Errorf("the newest call's extra_content: %s", raw)
	}
	if _, ok := c.byID["call_last"]; ok || len(c.byID) != maxCallExtras || len(c.order) != maxCallExtras {
		t.Errorf("%d kept, %d in order", len(c.byID), len(c.order))
	}
}
