package builtin_test

import (
	"os"
	"testing"

	"github.com/kin-dev/kin/agent/reaper"
)

// The tests run bash commands as kin serve does: as a child subreaper.
func TestMain(m *testing.M) {
	if err := reaper.Enable(); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}
