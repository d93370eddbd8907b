package main

import (
	"fmt"
	"io"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/rpc"
)

func runMCP(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "kin mcp: not built yet")
	return 2
}

func runGrants(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "kin grants: not built yet")
	return 2
}

func mcpFactory(log *zap.Logger) rpc.MCPFactory { return nil }
