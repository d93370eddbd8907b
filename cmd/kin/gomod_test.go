package main_test

import (
	"os"
	"strings"
	"testing"
)

// The four packages kin is built on are direct requirements: `go mod tidy`
// marks a module "// indirect" once nothing imports it, which would mean a
// hand-rolled replacement crept in.
func TestRequiredPackagesAreDirectRequirements(t *testing.T) {
	b, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, mod := range []string{
		"github.com/sourcegraph/jsonrpc2",
		"github.com/modelcontextprotocol/go-sdk",
		"github.com/openai/openai-go/v3",
		"go.uber.org/zap",
	} {
		found := false
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) > 0 && f[0] == "require" {
				f = f[1:]
			}
			if len(f) < 2 || f[0] != mod {
				continue
			}
			found = true
			if strings.Contains(line, "// indirect") {
				t.Errorf("go.mod: %s is marked indirect: %s", mod, strings.TrimSpace(line))
			}
		}
		if !found {
			t.Errorf("go.mod does not require %s", mod)
		}
	}
}
