package rpc

// PROTOCOL.md, Models: models/list.

// Methods of this section.
const MethodModelsList = "models/list"

// ModelsListResult is models/list's result: the models a session may use
// and the default (a new session's model when it names none).
type ModelsListResult struct {
	Models  []ModelEntry `json:"models"`
	Default string       `json:"default"`
}

// ModelEntry is one model. Never its key or its service's address.
type ModelEntry struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	ContextWindow int64    `json:"contextWindow"`
	Efforts       []string `json:"efforts"` // the reasoning efforts it takes ([]: none)
	API           string   `json:"api"`     // responses or chat
	Images        bool     `json:"images"`
	// APIKeyEnv names the environment variable kin reads the model's key
	// from (never the key), so an editor can offer to set it.
	APIKeyEnv string `json:"apiKeyEnv"`
	// Configured says whether turns can run on it; Missing says what to
	// set when they cannot.
	Configured bool   `json:"configured"`
	Missing    string `json:"missing,omitempty"`
}
