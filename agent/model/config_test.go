package model_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/model"
)

func catalog(t *testing.T, settings string, env map[string]string) (model.Catalog, error) {
	t.Helper()
	home := t.TempDir()
	if settings != "" {
		if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(settings), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return model.LoadCatalog(home, func(k string) string { return env[k] })
}

func TestTheOneModelShorthand(t *testing.T) {
	c, err := catalog(t, `{"model":"from-file","openaiApiKey":"sk-file"}`, map[string]string{"KIN_MODEL": "gpt-x", "OPENAI_BASE_URL": "http://local:1/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	m := c.DefaultConfig()
	if len(c.Models) != 1 || m.Model != "gpt-x" || m.APIKey != "sk-file" || m.BaseURL != "http://local:1/v1" ||
		m.Window() != model.DefaultContextWindow || m.NoImages || !m.TakesEffort("high") || c.Threshold() != 0.8 {
		t.Errorf("catalog %+v", c)
	}
}

func TestModelsFromSettings(t *testing.T) {
	settings := `{
	  "openaiApiKey": "sk-openai",
	  "model": "local",
	  "compactThreshold": 0.5,
	  "models": [
	    {"id": "gpt-5.1", "name": "GPT-5.1", "contextWindow": 400000, "efforts": ["low", "medium", "high"]},
	    {"id": "local", "contextWindow": 32768, "baseUrl": "http://127.0.0.1:8080/v1", "apiKeyEnv": "LOCAL_KEY", "api": "chat", "images": false}
	  ]
	}`
	c, err := catalog(t, settings, map[string]string{"LOCAL_KEY": "sk-local"})
	if err != nil {
		t.Fatal(err)
	}
	gpt, _ := c.Find("gpt-5.1")
	local := c.DefaultConfig()
	if c.Default != "local" || c.Threshold() != 0.5 || local.API != model.APIChat || local.APIKey != "sk-local" || !local.NoImages ||
		local.Window() != 32768 || local.TakesEffort("low") || local.BaseURL != "http://127.0.0.1:8080/v1" {
		t.Errorf("local %+v", local)
	}
	if gpt.APIKey != "sk-openai" || gpt.DisplayName() != "GPT-5.1" || !gpt.TakesEffort("medium") || gpt.TakesEffort("xhigh") || gpt.NoImages {
		t.Errorf("gpt %+v", gpt)
	}
	// KIN_MODEL picks the default, and one not listed joins the list.
	c, _ = catalog(t, settings, map[string]string{"KIN_MODEL": "gpt-5.1"})
	if c.Default != "gpt-5.1" || len(c.Models) != 2 {
		t.Errorf("KIN_MODEL listed: %+v", c)
	}
	c, _ = catalog(t, settings, map[string]string{"KIN_MODEL": "o9"})
	if m := c.DefaultConfig(); c.Default != "o9" || len(c.Models) != 3 || m.APIKey != "sk-openai" {
		t.Errorf("KIN_MODEL not listed: %+v", c)
	}
	if miss := local.Missing(); miss != "" {
		t.Errorf("local is configured: %s", miss)
	}
	c, _ = catalog(t, settings, nil)
	if miss := c.DefaultConfig().Missing(); !strings.Contains(miss, "LOCAL_KEY") {
		t.Errorf("a model whose key is missing names its variable: %q", miss)
	}
}

func TestBadModelsAreErrorsNamingTheEntry(t *testing.T) {
	for settings, want := range map[string]string{
		`{"models":[{"contextWindow":1000}]}`:                                    "models[0]: id is required",
		`{"models":[{"id":"a"}]}`:                                                "a: contextWindow is required",
		`{"models":[{"id":"a","contextWindow":1,"api":"soap"}]}`:                 `api "soap"`,
		`{"models":[{"id":"a","contextWindow":1,"efforts":["turbo"]}]}`:          `effort "turbo"`,
		`{"models":[{"id":"a","contextWindow":1,"baseUrl":"ftp://x?key=sk-1"}]}`: "baseUrl must be an http or https URL",
		`{"models":[{"id":"a","contextWindow":1},{"id":"a","contextWindow":2}]}`: `models[1]: the id "a" is listed twice`,
		`{"model":"b","models":[{"id":"a","contextWindow":1}]}`:                  `model "b" (the default) is not one of models (a)`,
		`{"compactThreshold":1.5}`:                                               "compactThreshold must be a share",
	} {
		_, err := catalog(t, settings, nil)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "settings.json") || strings.Contains(err.Error(), "sk-1") {
			t.Errorf("%s: error %v, want %q", settings, err, want)
		}
	}
}
