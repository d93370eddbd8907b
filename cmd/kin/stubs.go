package main

import (
	"go.uber.org/zap"

	"github.com/kin-dev/kin/rpc"
)

func mcpFactory(log *zap.Logger) rpc.MCPFactory { return nil }
