package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// The ACP schema as @agentclientprotocol/sdk ships it (schema/v1/schema.json,
// installed by npm in editors/acp/test; CI sets KIN_TEST_ACP_SCHEMA). kin's
// frames are validated against the definition of their method and
// direction, made strict: an object may hold only the properties the
// schema names (and _meta), so a misspelt field fails instead of passing
// as an extension.

var (
	schemaOnce sync.Once
	schemaDoc  map[string]any
	schemaErr  error
)

func schemaPath() string {
	if p := os.Getenv("KIN_TEST_ACP_SCHEMA"); p != "" {
		return p
	}
	return filepath.Join("..", "..", "editors", "acp", "test", "node_modules", "@agentclientprotocol", "sdk", "schema", "v1", "schema.json")
}

// acpSchema returns the strict schema document, or skips the test when it
// is not installed (fails when KIN_REQUIRE_ACP_SCHEMA is set, as in CI).
func acpSchema(t *testing.T) map[string]any {
	t.Helper()
	if !schemaInstalled(t) {
		t.Skipf("the ACP schema is not installed (npm ci in editors/acp/test): %v", schemaErr)
	}
	return schemaDoc
}

// schemaInstalled loads the schema once and reports whether it is there
// (failing the test when KIN_REQUIRE_ACP_SCHEMA is set and it is not).
func schemaInstalled(t *testing.T) bool {
	t.Helper()
	schemaOnce.Do(func() {
		var b []byte
		if b, schemaErr = os.ReadFile(schemaPath()); schemaErr != nil {
			return
		}
		if schemaErr = json.Unmarshal(b, &schemaDoc); schemaErr != nil {
			return
		}
		if schemaErr = addUnstableFork(schemaDoc); schemaErr != nil {
			return
		}
		if schemaErr = addUnstableModels(schemaDoc); schemaErr != nil {
			return
		}
		for _, d := range schemaDoc["$defs"].(map[string]any) {
			strict(d, false)
		}
	})
	if schemaErr != nil && os.Getenv("KIN_REQUIRE_ACP_SCHEMA") != "" {
		t.Fatalf("the ACP schema: %v", schemaErr)
	}
	return schemaErr == nil
}

// addUnstableModels puts ACP's unstable session model API back into the
// schema (testdata/schema-unstable-models.json: the definitions as the
// schema had them before they were removed), since kin serves it for the
// clients that still read it: a session's "models" beside its modes, and
// session/set_model.
func addUnstableModels(doc map[string]any) error {
	b, err := os.ReadFile(filepath.Join("testdata", "schema-unstable-models.json"))
	if err != nil {
		return err
	}
	var extra struct {
		Defs map[string]any `json:"$defs"`
	}
	if err := json.Unmarshal(b, &extra); err != nil {
		return err
	}
	defs := doc["$defs"].(map[string]any)
	for name, d := range extra.Defs {
		defs[name] = d
	}
	for _, name := range []string{"NewSessionResponse", "LoadSessionResponse", "ResumeSessionResponse"} {
		props := defs[name].(map[string]any)["properties"].(map[string]any)
		props["models"] = map[string]any{"anyOf": []any{map[string]any{"$ref": "#/$defs/SessionModelState"}, map[string]any{"type": "null"}}}
	}
	return nil
}

func constrained(m map[string]any) bool {
	for _, k := range []string{"type", "$ref", "allOf", "anyOf", "oneOf", "properties", "const", "enum"} {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// strict adds unevaluatedProperties:false where an instance location is
// entered (a property's, an item's or an additional property's schema),
// never inside the in-place applicators that share the location, so that
// properties named by any branch that applies count as known.
func strict(v any, entry bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	if entry && constrained(m) {
		_, add := m["additionalProperties"]
		_, unev := m["unevaluatedProperties"]
		if !add && !unev {
			m["unevaluatedProperties"] = false
		}
	}
	for k, c := range m {
		switch k {
		case "properties":
			for _, p := range c.(map[string]any) {
				strict(p, true)
			}
		case "items", "additionalProperties":
			strict(c, true)
		case "allOf", "anyOf", "oneOf":
			for _, s := range c.([]any) {
				strict(s, false)
			}
		}
	}
}

var resolved sync.Map // def name -> *jsonschema.Resolved

// validate checks v against the schema's definition def.
func validate(t *testing.T, def string, v any) error {
	t.Helper()
	doc := acpSchema(t)
	r, ok := resolved.Load(def)
	if !ok {
		w := map[string]any{"$schema": doc["$schema"], "$ref": "#/$defs/" + def, "$defs": doc["$defs"], "unevaluatedProperties": false}
		b, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		r, _ = resolved.LoadOrStore(def, rs)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var inst any
	if err := json.Unmarshal(b, &inst); err != nil {
		t.Fatal(err)
	}
	return r.(*jsonschema.Resolved).Validate(inst)
}

// defFor names the schema definition of a frame: the definition whose
// x-method is the frame's method, on the side that handles it, of the
// frame's kind.
func defFor(t *testing.T, f frame) string {
	t.Helper()
	if f.Error != nil {
		return "Error"
	}
	side := "agent" // the client calls the agent
	if (f.Dir == "kin") == (f.Kind != "response") {
		side = "client"
	}
	suffix := map[string]string{"request": "Request", "response": "Response", "notification": "Notification"}[f.Kind]
	for name, d := range acpSchema(t)["$defs"].(map[string]any) {
		m := d.(map[string]any)
		if m["x-method"] == f.Method && m["x-side"] == side && strings.HasSuffix(name, suffix) {
			return name
		}
		if f.Method == NotifyCancelRequest && name == "CancelRequestNotification" {
			return name
		}
	}
	return ""
}

// checkFrame validates one frame's body (params, result or error).
func checkFrame(t *testing.T, f frame) {
	t.Helper()
	def := defFor(t, f)
	if def == "" {
		t.Errorf("%s %s %s: the schema has no definition for it", f.Dir, f.Kind, f.Method)
		return
	}
	var body any = f.Params
	switch {
	case f.Error != nil:
		body = f.Error
	case f.Kind == "response":
		body = f.Result
	}
	if len(f.Params) == 0 && f.Kind != "response" {
		body = map[string]any{}
	}
	if err := validate(t, def, body); err != nil {
		b, _ := json.Marshal(body)
		t.Errorf("%s %s %s does not validate against %s: %v\n%s", f.Dir, f.Kind, f.Method, def, err, b)
	}
}

// checkSentFrames validates every frame kin sent on a test's connection
// (requests, answers, errors and every session/update) against the
// schema, when it is installed: each test's traffic is checked, not only
// the golden session's.
func checkSentFrames(t *testing.T, frames []frame) {
	t.Helper()
	if !schemaInstalled(t) {
		return
	}
	for _, f := range frames {
		if f.Dir == "kin" {
			checkFrame(t, f)
		}
	}
}

func TestStrictSchemaRefusesWhatTheSchemaDoesNotName(t *testing.T) {
	good := map[string]any{"sessionId": "s", "update": map[string]any{"sessionUpdate": "current_mode_update", "currentModeId": "agent"}}
	if err := validate(t, "SessionNotification", good); err != nil {
		t.Fatalf("a valid update: %v", err)
	}
	// The prose documentation's spelling: the schema says currentModeId.
	bad := map[string]any{"sessionId": "s", "update": map[string]any{"sessionUpdate": "current_mode_update", "modeId": "agent"}}
	if err := validate(t, "SessionNotification", bad); err == nil {
		t.Fatal("modeId passed")
	}
	extra := map[string]any{"sessionId": "s", "update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "x", "bogus": 1}}}
	if err := validate(t, "SessionNotification", extra); err == nil {
		t.Fatal("an unknown property passed")
	}
}
