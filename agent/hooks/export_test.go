package hooks

import "net/http"

// SetTransport puts rt in place of the http hooks' transport until the
// returned func puts it back.
func SetTransport(rt http.RoundTripper) (restore func()) {
	old := testTransport
	testTransport = rt
	return func() { testTransport = old }
}

// For the tests (package hooks_test).
var (
	BuildPrompt = buildPrompt
	PromptText  = &promptSystem
)

// ParseVerdict is parseVerdict with its answer's fields.
func ParseVerdict(answer string) (ok, impossible bool, reason string, err error) {
	v, err := parseVerdict(answer)
	return v.OK, v.Impossible, v.Reason, err
}

// AgentText is what an agent hook's judge is told.
var AgentText = &agentSystem
