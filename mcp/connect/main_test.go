package connect_test

import (
	"testing"

	"github.com/kin-dev/kin/mcp/mcptest"
)

func TestMain(m *testing.M) { mcptest.Main(m) }
