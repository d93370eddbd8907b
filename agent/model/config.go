package model

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/kin-dev/kin/agent/settings"
)

// DefaultModel is used when neither KIN_MODEL nor the settings file names one.
const DefaultModel = "gpt-5.1"

// DefaultIdleTimeout is how long the model service may send nothing before
// a turn fails, unless settings.json says otherwise.
const DefaultIdleTimeout = 120 * time.Second

// Config says which model service to talk to.
type Config struct {
	APIKey  string `json:"-"` // never marshalled: it must not reach a log or a notification
	BaseURL string `json:"baseUrl,omitempty"`
	Model   string `json:"model"`
	// IdleTimeout ends a model request that receives nothing for this long
	// (zero: DefaultIdleTimeout).
	IdleTimeout time.Duration `json:"-"`
}

// LoadConfig reads OPENAI_API_KEY, OPENAI_BASE_URL and KIN_MODEL from the
// environment, falling back to $KIN_HOME/settings.json (the environment wins,
// so a one-off run can point elsewhere without editing the file). A settings
// file that cannot be parsed is an error naming the file; a missing one is not.
func LoadConfig(kinHome string, getenv func(string) string) (Config, error) {
	s, err := settings.Load(kinHome)
	if err != nil {
		return Config{}, err
	}
	c := Config{
		APIKey:      first(getenv("OPENAI_API_KEY"), s.OpenAIAPIKey),
		BaseURL:     strings.TrimRight(first(getenv("OPENAI_BASE_URL"), s.OpenAIBaseURL), "/"),
		Model:       first(getenv("KIN_MODEL"), s.Model, DefaultModel),
		IdleTimeout: DefaultIdleTimeout,
	}
	if v := s.ModelIdleTimeoutSeconds; v != 0 {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) || v > math.MaxInt64/float64(time.Second) {
			return Config{}, fmt.Errorf("kin: %s: modelIdleTimeoutSeconds must be a positive number of seconds, not %v", settings.Path(kinHome), v)
		}
		c.IdleTimeout = time.Duration(v * float64(time.Second))
	}
	return c, nil
}

// Missing says what a person must set before a turn can run, or "" when the
// configuration is complete.
func (c Config) Missing() string {
	if c.APIKey == "" {
		return "set OPENAI_API_KEY (and OPENAI_BASE_URL for a service other than OpenAI's, KIN_MODEL to choose the model), or put them in $KIN_HOME/settings.json"
	}
	return ""
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
