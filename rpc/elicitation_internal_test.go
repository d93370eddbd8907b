package rpc

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/ask"
)

// A pattern only kin may check (the editors' backtracking engines could
// take forever on it as the person types) is left out of the field the
// editor gets; a plain one is sent as it came.
func TestAPatternForKinAloneIsNotSentToTheEditor(t *testing.T) {
	kinOnly, err := json.Marshal(elicitationField(ask.Field{Name: "x", Type: ask.TypeString, Pattern: `^(a+)+$`, PatternKinOnly: true}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(kinOnly), "pattern") {
		t.Errorf("the editor is given a pattern only kin may check: %s", kinOnly)
	}
	plain, _ := json.Marshal(elicitationField(ask.Field{Name: "x", Type: ask.TypeString, Pattern: `^[A-Z]{3}$`}))
	if !strings.Contains(string(plain), `"pattern":"^[A-Z]{3}$"`) {
		t.Errorf("a plain pattern is not sent: %s", plain)
	}
}
