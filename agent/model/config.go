package model

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/kin-dev/kin/agent/settings"
)

// DefaultModel is used when neither KIN_MODEL nor the settings file names one.
const DefaultModel = "gpt-5.1"

// DefaultIdleTimeout is how long the model service may send nothing before
// a turn fails, unless settings.json says otherwise.
const DefaultIdleTimeout = 120 * time.Second

// DefaultContextWindow is the window of a model whose window nobody stated
// (the one-model shorthand): small enough for most models kin meets, so
// compaction starts early rather than too late.
const DefaultContextWindow = 128_000

// DefaultCompactThreshold is the share of the window past which kin
// compacts the conversation.
const DefaultCompactThreshold = 0.8

// APIs a model service may speak.
const (
	APIResponses = "responses"
	APIChat      = "chat"
)

// Efforts are the reasoning efforts kin knows (the Responses API's values).
var Efforts = []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}

// shorthandEfforts are what the one-model shorthand offers: the efforts
// every OpenAI reasoning model takes. A service that refuses reasoning
// parameters is detected from its answer (see Client).
var shorthandEfforts = []string{"low", "medium", "high"}

// Config is one model kin can talk to and the service serving it.
type Config struct {
	APIKey  string `json:"-"` // never marshalled: it must not reach a log or a notification
	BaseURL string `json:"baseUrl,omitempty"`
	Model   string `json:"model"` // the model's id, as the service knows it
	Name    string `json:"name,omitempty"`
	// API is APIResponses ("" too) or APIChat.
	API string `json:"api,omitempty"`
	// ContextWindow is the model's window in tokens (0: DefaultContextWindow).
	ContextWindow int64 `json:"contextWindow,omitempty"`
	// Efforts are the reasoning efforts the model accepts (none: it takes
	// no effort setting).
	Efforts []string `json:"efforts,omitempty"`
	// NoImages is set for a model that takes no image input.
	NoImages bool `json:"-"`
	// IdleTimeout ends a model request that receives nothing for this long
	// (zero: DefaultIdleTimeout).
	IdleTimeout time.Duration `json:"-"`
	// keyVar names where the key comes from, for Missing.
	keyVar string
}

// Window is the model's context window in tokens.
func (c Config) Window() int64 {
	if c.ContextWindow > 0 {
		return c.ContextWindow
	}
	return DefaultContextWindow
}

// DisplayName is the model's name for a person.
func (c Config) DisplayName() string {
	if c.Name != "" {
		return c.Name
	}
	return c.Model
}

// TakesEffort reports whether effort is one the model accepts ("" always is).
func (c Config) TakesEffort(effort string) bool {
	return effort == "" || slices.Contains(c.Efforts, effort)
}

// KeyVar is the name of the environment variable kin reads the model's key
// from (OPENAI_API_KEY, or the model's apiKeyEnv): a name, never the key, so
// a front end can offer to set it.
func (c Config) KeyVar() string {
	if c.keyVar == "" {
		return "OPENAI_API_KEY"
	}
	return c.keyVar
}

// Missing says what a person must set before a turn can run, or "" when the
// configuration is complete.
func (c Config) Missing() string {
	if c.APIKey != "" {
		return ""
	}
	if c.keyVar != "" && c.keyVar != "OPENAI_API_KEY" {
		return fmt.Sprintf("set %s (the key of the service serving %s, named by apiKeyEnv in $KIN_HOME/settings.json)", c.keyVar, c.Model)
	}
	return "set OPENAI_API_KEY (and OPENAI_BASE_URL for a service other than OpenAI's, KIN_MODEL to choose the model), or put them in $KIN_HOME/settings.json"
}

// Catalog is every model a session may use and the default.
type Catalog struct {
	Models  []Config
	Default string // a Model of Models
	// CompactThreshold is the share of the window past which the
	// conversation is compacted (0: DefaultCompactThreshold).
	CompactThreshold float64
}

// One is the catalog of a single model.
func One(c Config) Catalog { return Catalog{Models: []Config{c}, Default: c.Model} }

// Find returns the model with id.
func (c Catalog) Find(id string) (Config, bool) {
	for _, m := range c.Models {
		if m.Model == id {
			return m, true
		}
	}
	return Config{}, false
}

// DefaultConfig is the default model (the zero Config when there is none).
func (c Catalog) DefaultConfig() Config {
	m, _ := c.Find(c.Default)
	return m
}

// Threshold is the compaction threshold.
func (c Catalog) Threshold() float64 {
	if c.CompactThreshold > 0 {
		return c.CompactThreshold
	}
	return DefaultCompactThreshold
}

// IDs lists the models' ids, for messages.
func (c Catalog) IDs() string {
	ids := make([]string, len(c.Models))
	for i, m := range c.Models {
		ids[i] = m.Model
	}
	return strings.Join(ids, ", ")
}

// LoadConfig is the default model of LoadCatalog.
func LoadConfig(kinHome string, getenv func(string) string) (Config, error) {
	c, err := LoadCatalog(kinHome, getenv)
	if err != nil {
		return Config{}, err
	}
	return c.DefaultConfig(), nil
}

// LoadCatalog reads the models from $KIN_HOME/settings.json and the
// environment. Without a models list there is one model: KIN_MODEL (else
// the file's model, else DefaultModel) at OPENAI_BASE_URL with
// OPENAI_API_KEY (else the file's openaiBaseUrl and openaiApiKey); the
// environment wins, so a one-off run can point elsewhere without editing
// the file. With a list, a model's own baseUrl and apiKeyEnv win over those
// shorthands, KIN_MODEL (else the file's model, else the first) is the
// default, and a KIN_MODEL that is not in the list is added as a one-model
// shorthand. A settings file that cannot be parsed, or a list that does not
// make sense, is an error naming the file; a missing file is not.
func LoadCatalog(kinHome string, getenv func(string) string) (Catalog, error) {
	s, err := settings.Load(kinHome)
	if err != nil {
		return Catalog{}, err
	}
	file := settings.Path(kinHome)
	idle := DefaultIdleTimeout
	if v := s.ModelIdleTimeoutSeconds; v != 0 {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) || v > math.MaxInt64/float64(time.Second) {
			return Catalog{}, fmt.Errorf("kin: %s: modelIdleTimeoutSeconds must be a positive number of seconds, not %v", file, v)
		}
		idle = time.Duration(v * float64(time.Second))
	}
	cat := Catalog{CompactThreshold: s.CompactThreshold}
	if v := s.CompactThreshold; v < 0 || v > 1 || math.IsNaN(v) {
		return Catalog{}, fmt.Errorf("kin: %s: compactThreshold must be a share of the context window between 0 and 1 (0.8 is 80%%), not %v", file, v)
	}
	key := first(getenv("OPENAI_API_KEY"), s.OpenAIAPIKey)
	base := strings.TrimRight(first(getenv("OPENAI_BASE_URL"), s.OpenAIBaseURL), "/")
	shorthand := func(id string) Config {
		return Config{APIKey: key, BaseURL: base, Model: id, IdleTimeout: idle, Efforts: shorthandEfforts, keyVar: "OPENAI_API_KEY"}
	}
	if len(s.Models) == 0 {
		m := shorthand(first(getenv("KIN_MODEL"), s.Model, DefaultModel))
		return Catalog{Models: []Config{m}, Default: m.Model, CompactThreshold: cat.CompactThreshold}, nil
	}
	for i, sm := range s.Models {
		m, err := fromSettings(sm, key, base, idle, getenv)
		if err != nil {
			return Catalog{}, fmt.Errorf("kin: %s: models[%d]: %v", file, i, err)
		}
		if _, dup := cat.Find(m.Model); dup {
			return Catalog{}, fmt.Errorf("kin: %s: models[%d]: the id %q is listed twice", file, i, m.Model)
		}
		cat.Models = append(cat.Models, m)
	}
	cat.Default = cat.Models[0].Model
	if s.Model != "" {
		if _, ok := cat.Find(s.Model); !ok {
			return Catalog{}, fmt.Errorf("kin: %s: model %q (the default) is not one of models (%s)", file, s.Model, cat.IDs())
		}
		cat.Default = s.Model
	}
	if env := getenv("KIN_MODEL"); env != "" {
		if _, ok := cat.Find(env); !ok {
			cat.Models = append(cat.Models, shorthand(env))
		}
		cat.Default = env
	}
	return cat, nil
}

func fromSettings(sm settings.ModelEntry, key, base string, idle time.Duration, getenv func(string) string) (Config, error) {
	if strings.TrimSpace(sm.ID) == "" {
		return Config{}, fmt.Errorf("id is required (the model as the service knows it)")
	}
	if sm.ContextWindow <= 0 {
		return Config{}, fmt.Errorf("%s: contextWindow is required (the model's window in tokens, such as 128000)", sm.ID)
	}
	m := Config{Model: sm.ID, Name: sm.Name, ContextWindow: sm.ContextWindow, APIKey: key, BaseURL: base,
		IdleTimeout: idle, keyVar: "OPENAI_API_KEY"}
	switch sm.API {
	case "", APIResponses:
	case APIChat:
		m.API = APIChat
	default:
		return Config{}, fmt.Errorf("%s: api %q is not one kin speaks (responses or chat)", sm.ID, sm.API)
	}
	for _, e := range sm.Efforts {
		if !slices.Contains(Efforts, e) {
			return Config{}, fmt.Errorf("%s: effort %q is not one kin knows (%s)", sm.ID, e, strings.Join(Efforts, ", "))
		}
	}
	m.Efforts = slices.Clone(sm.Efforts)
	if sm.BaseURL != "" {
		u, err := url.Parse(sm.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Config{}, fmt.Errorf("%s: baseUrl must be an http or https URL", sm.ID) // never echo it: it may carry a key
		}
		m.BaseURL = strings.TrimRight(sm.BaseURL, "/")
	}
	if sm.APIKeyEnv != "" {
		m.keyVar, m.APIKey = sm.APIKeyEnv, getenv(sm.APIKeyEnv)
	}
	m.NoImages = sm.Images != nil && !*sm.Images
	return m, nil
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
