package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// DefaultModel is used when neither KIN_MODEL nor the settings file names one.
const DefaultModel = "gpt-5.1"

// Config says which model service to talk to.
type Config struct {
	APIKey  string `json:"-"` // never marshalled: it must not reach a log or a notification
	BaseURL string `json:"baseUrl,omitempty"`
	Model   string `json:"model"`
}

// settings is the optional file $KIN_HOME/settings.json. The environment wins
// over it, so a one-off run can point elsewhere without editing the file.
type settings struct {
	APIKey  string `json:"openaiApiKey"`
	BaseURL string `json:"openaiBaseUrl"`
	Model   string `json:"model"`
}

// LoadConfig reads OPENAI_API_KEY, OPENAI_BASE_URL and KIN_MODEL from the
// environment, falling back to $KIN_HOME/settings.json. A settings file that
// cannot be parsed is an error naming the file; a missing one is not.
func LoadConfig(kinHome string, getenv func(string) string) (Config, error) {
	var s settings
	path := filepath.Join(kinHome, "settings.json")
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &s); err != nil {
			return Config{}, fmt.Errorf("kin: %s is not valid JSON: %v", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return Config{}, fmt.Errorf("kin: reading %s: %v", path, err)
	}
	c := Config{
		APIKey:  first(getenv("OPENAI_API_KEY"), s.APIKey),
		BaseURL: strings.TrimRight(first(getenv("OPENAI_BASE_URL"), s.BaseURL), "/"),
		Model:   first(getenv("KIN_MODEL"), s.Model, DefaultModel),
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
