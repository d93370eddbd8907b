module github.com/kin-dev/kin

go 1.26.8

require (
	github.com/ergochat/readline v0.1.3
	github.com/google/jsonschema-go v0.4.3
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/openai/openai-go/v3 v3.98.0
	github.com/sourcegraph/jsonrpc2 v0.2.3
	github.com/tidwall/gjson v1.20.0
	github.com/yosida95/uritemplate/v3 v3.0.2
	go.uber.org/zap v1.28.0
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/oauth2 v0.35.0
	golang.org/x/sync v0.23.0
	golang.org/x/sys v0.48.0
	golang.org/x/term v0.46.0
	golang.org/x/text v0.42.0
)

require (
	github.com/coder/websocket v1.8.15 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.1 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)

ignore (
	./.ci/npm/node_modules
	./editors
	./mcp/conformance/node_modules
)
