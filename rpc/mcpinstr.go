package rpc

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/mcp/manager"
)

// MethodMCPAcceptInstructions accepts a server's changed instructions.
const MethodMCPAcceptInstructions = "mcp/acceptInstructions"

// MCPAcceptInstructionsParams name the server and the hash of the
// instructions the person was shown (mcp/list's instructionsHash).
type MCPAcceptInstructionsParams struct {
	Name string `json:"name"`
	Hash string `json:"hash"`
}

// MCPAcceptInstructionsResult answers mcp/acceptInstructions.
type MCPAcceptInstructionsResult struct {
	Accepted bool `json:"accepted"`
}

// handleMCPAcceptInstructions pins a server's changed instructions in its
// trust grant: the model gets them from the next request on. The hash must
// be that of the text now waiting (so the person accepts exactly what they
// saw); an unknown server is -32013, another hash -32602.
func handleMCPAcceptInstructions(_ context.Context, s *Server, params json.RawMessage) (any, error) {
	var p MCPAcceptInstructionsParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if err := needName(p.Name); err != nil {
		return nil, err
	}
	if p.Hash == "" {
		return nil, &jsonrpc2.Error{Code: CodeInvalidParams, Message: "hash is required: the instructionsHash mcp/list shows"}
	}
	m, err := s.mcpService()
	if err != nil {
		return nil, err
	}
	if err := m.m.AcceptInstructions(p.Name, p.Hash); err != nil {
		code := int64(CodeInvalidParams)
		if errors.Is(err, manager.ErrUnknownServer) {
			code = CodeNotFound
		}
		return nil, &jsonrpc2.Error{Code: code, Message: err.Error()}
	}
	return MCPAcceptInstructionsResult{Accepted: true}, nil
}
