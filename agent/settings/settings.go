// Package settings reads $KIN_HOME/settings.json, the person's own choices
// for kin (model service, limits, sandbox...). Every feature that has a
// setting declares its field here, so there is one file, one parser and one
// place that documents what the file may hold.
//
// The file may hold the model key, so it is never logged and never written
// with a mode wider than 0600. The environment wins over the file where a
// variable exists for the same thing (the callers decide that).
package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Settings is the file's content. Absent fields are zero.
type Settings struct {
	OpenAIAPIKey  string `json:"openaiApiKey,omitempty"`
	OpenAIBaseURL string `json:"openaiBaseUrl,omitempty"`
	Model         string `json:"model,omitempty"`
	// ModelIdleTimeoutSeconds is how long the model service may send
	// nothing (before it answers or mid-answer) before the turn fails.
	// Zero means the default (model.DefaultIdleTimeout).
	ModelIdleTimeoutSeconds float64 `json:"modelIdleTimeoutSeconds,omitempty"`
	// Models are the models a session may pick (models/list); Model above
	// names the default (else the first). Without models, the one model is
	// KIN_MODEL / model at OPENAI_BASE_URL / openaiBaseUrl.
	Models []ModelEntry `json:"models,omitempty"`
	// CompactThreshold is the share of a model's context window (0 to 1)
	// past which kin summarises the conversation before the next request.
	// Zero means the default (0.8).
	CompactThreshold float64 `json:"compactThreshold,omitempty"`

	// Sandbox is how commands are confined: "auto" (the default: confined
	// where the system allows it, unconfined and said so where not),
	// "required" (refuse commands that cannot be confined) or "off".
	Sandbox string `json:"sandbox,omitempty"`
	// SandboxWritable are extra folders confined commands may change
	// (absolute, or starting with ~/).
	SandboxWritable []string `json:"sandboxWritable,omitempty"`
	// AutoApproveSandboxedCommands lets the auto-edit mode run confined,
	// network-less commands without asking (never unconfined ones). It
	// takes effect with that mode.
	AutoApproveSandboxedCommands bool `json:"autoApproveSandboxedCommands,omitempty"`

	// MaxToolCallsPerTurn is how many tool calls a turn makes before kin
	// asks the person whether to go on (for as many again). Zero means the
	// default (16).
	MaxToolCallsPerTurn int `json:"maxToolCallsPerTurn,omitempty"`

	// Subagents are the settings of the delegate tool (a child session
	// that works on a task in its own context).
	Subagents Subagents `json:"subagents,omitzero"`

	// Limits are spend limits: kin asks the person before a model
	// request that would pass one.
	Limits Limits `json:"limits,omitzero"`
	// ToolSearchThreshold is the budget past which MCP tools' definitions
	// are left out of requests and found with search_tools
	// (agent/toolsearch): more than Tools MCP tools (default 40) or more
	// than Bytes bytes of their definitions (default 20,000). An absent
	// field is its default; a negative one never defers by that measure;
	// {"tools": 0} defers whenever there is an MCP tool.
	ToolSearchThreshold *ToolSearchThreshold `json:"toolSearchThreshold,omitempty"`
}

// ToolSearchThreshold is the toolSearchThreshold setting.
type ToolSearchThreshold struct {
	Tools *int `json:"tools,omitempty"`
	Bytes *int `json:"bytes,omitempty"`
}

// Subagents configure the delegate tool.
type Subagents struct {
	// Model is the model a subagent uses (an id of models); empty means
	// its parent session's.
	Model string `json:"model,omitempty"`
	// MaxRunning is how many subagents may run at once in one kin; zero
	// means the default (3). A delegate call beyond it waits for one to
	// end.
	MaxRunning int `json:"maxRunning,omitempty"`
	// MaxDepth is how deep subagents may nest: 1 (the default) lets the
	// person's sessions delegate and no subagent delegate further.
	MaxDepth int `json:"maxDepth,omitempty"`
}

// ModelEntry is one entry of models.
type ModelEntry struct {
	// ID is the model as the service knows it (sent in every request) and
	// as sessions name it.
	ID   string `json:"id"`
	Name string `json:"name,omitempty"` // shown to the person; ID when empty
	// ContextWindow is how many tokens the model takes in one request.
	ContextWindow int64 `json:"contextWindow"`
	// Efforts are the reasoning efforts the model accepts (none, minimal,
	// low, medium, high, xhigh); empty means it takes no effort setting.
	Efforts []string `json:"efforts,omitempty"`
	// BaseURL is the service's address (ending in /v1 for most); empty
	// uses OPENAI_BASE_URL / openaiBaseUrl, else OpenAI's.
	BaseURL string `json:"baseUrl,omitempty"`
	// APIKeyEnv names the environment variable holding this service's key
	// (the key itself never goes in this file's models); empty uses
	// OPENAI_API_KEY / openaiApiKey.
	APIKeyEnv string `json:"apiKeyEnv,omitempty"`
	// API is "responses" (the default) or "chat" (Chat Completions, for
	// servers that never learned the Responses API).
	API string `json:"api,omitempty"`
	// Images says whether the model takes image input; absent means yes.
	Images *bool `json:"images,omitempty"`
}

// Path is where the file lives under home.
func Path(home string) string { return filepath.Join(home, "settings.json") }

// MaxBytes bounds the file: settings are a few KiB, and a sparse or
// growing file must not be read into memory whole.
const MaxBytes = 4 << 20

// Load reads the file under home. A missing file is the zero Settings; one
// that cannot be read or parsed, is not a regular file or is over MaxBytes
// is an error naming the file.
func Load(home string) (Settings, error) {
	var s Settings
	path := Path(home)
	b, err := ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("kin: reading %s: %v", path, err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return Settings{}, fmt.Errorf("kin: %s is not valid JSON: %v", path, err)
	}
	return s, nil
}

// Limits are spend limits (see package agent/spend): tokens a turn, a
// session or a day may use before kin asks the person, and, where the
// models have prices, the same in money. Zero means no limit.
type Limits struct {
	TurnTokens    int64 `json:"turnTokens,omitempty"`
	SessionTokens int64 `json:"sessionTokens,omitempty"`
	DayTokens     int64 `json:"dayTokens,omitempty"`
	// The cost limits count only requests to models with a price.
	TurnCost    float64 `json:"turnCost,omitempty"`
	SessionCost float64 `json:"sessionCost,omitempty"`
	DayCost     float64 `json:"dayCost,omitempty"`
	// Currency names what prices and cost limits are in ("USD" when
	// empty); kin never converts.
	Currency string `json:"currency,omitempty"`
	// Prices are per model id, per million tokens.
	Prices map[string]Price `json:"prices,omitempty"`
}

// Price is what a model's tokens cost, per million.
type Price struct {
	Input       float64 `json:"input"`
	CachedInput float64 `json:"cachedInput,omitempty"`
	Output      float64 `json:"output"`
}

// checkFile refuses a settings file that is there but is not a regular
// file of at most MaxBytes (a FIFO would block every reader in open(2) and
// /dev/zero never ends: kin would hang at start). Links are followed, so a
// file kept in a dotfiles repository works. A missing file is
// os.ErrNotExist.
func checkFile(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		what := "a special file"
		switch t := fi.Mode().Type(); {
		case t&os.ModeNamedPipe != 0:
			what = "a named pipe"
		case t&os.ModeDevice != 0:
			what = "a device"
		case t&os.ModeDir != 0:
			what = "a folder"
		}
		return fmt.Errorf("it is %s, not a file; replace it with a JSON file", what)
	}
	if fi.Size() > MaxBytes {
		return fmt.Errorf("it is %d bytes, over the %d kin reads", fi.Size(), MaxBytes)
	}
	return nil
}

// ReadFile is the content of a settings file at path, after checkFile,
// bounded to MaxBytes: what every reader of the person's settings.json
// uses (the hooks in it too), so a FIFO or /dev/zero there hangs none.
func ReadFile(path string) ([]byte, error) {
	if err := checkFile(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err == nil && len(b) > MaxBytes {
		err = fmt.Errorf("it grew over the %d bytes kin reads", MaxBytes)
	}
	return b, err
}
