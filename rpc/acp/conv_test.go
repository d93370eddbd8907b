package acp

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// Tests of what kin's conversation features (issue 14) are in ACP's terms:
// the model and its effort as config options, reasoning as thought chunks,
// images.

// twoModels is a catalog of a model that reasons and takes images and one
// that does neither.
const twoModels = `{"models":[
	{"id":"m-vision","name":"Vision","contextWindow":64000,"efforts":["low","high"]},
	{"id":"m-text","name":"Text","contextWindow":32000,"images":false}]}`

func option(opts []ConfigOption, id string) *ConfigOption {
	for i := range opts {
		if opts[i].ID == id {
			return &opts[i]
		}
	}
	return nil
}

func values(o *ConfigOption) []string {
	var out []string
	for _, c := range o.Options {
		out = append(out, c.Value)
	}
	return out
}

// lastOptions are the config options of the last config_option_update.
func (c *client) lastOptions() []ConfigOption {
	us := c.updates(UpdateConfigOption)
	if len(us) == 0 {
		return nil
	}
	b, _ := json.Marshal(us[len(us)-1]["configOptions"])
	var out []ConfigOption
	_ = json.Unmarshal(b, &out)
	return out
}

// The model and the reasoning effort are config options mapped onto kin's
// session/configure: offered from kin's models, switched by
// set_config_option (and /model), announced, used from the next request,
// kept with the session for the next process; a bad value is refused
// naming what there is.
func TestModelAndEffortAreConfigOptions(t *testing.T) {
	w := newWorld(t)
	w.settings(twoModels)
	c := w.connect(nil)
	c.initialize(nil)
	var opened NewSessionResponse
	c.call(MethodSessionNew, map[string]any{"cwd": w.ws, "mcpServers": []any{}}, &opened)
	sid := opened.SessionID
	m := option(opened.ConfigOptions, configModel)
	e := option(opened.ConfigOptions, configEffort)
	if m == nil || m.Category != "model" || m.CurrentValue != "m-vision" || !slices.Equal(values(m), []string{"m-vision", "m-text"}) {
		t.Fatalf("model option %+v", m)
	}
	if !strings.Contains(m.Options[1].Description, "no images") {
		t.Errorf("the text model's description %q does not say it takes no images", m.Options[1].Description)
	}
	if e == nil || e.Category != "thought_level" || e.CurrentValue != effortDefault || !slices.Equal(values(e), []string{effortDefault, "low", "high"}) {
		t.Fatalf("effort option %+v", e)
	}

	var set SetConfigOptionResponse
	c.call(MethodSessionSetConfig, map[string]any{"sessionId": sid, "configId": configEffort, "value": "high"}, &set)
	if got := option(set.ConfigOptions, configEffort); got == nil || got.CurrentValue != "high" {
		t.Errorf("after set: effort %+v", got)
	}
	c.until("the effort's config_option_update", func() bool {
		o := option(c.lastOptions(), configEffort)
		return o != nil && o.CurrentValue == "high"
	})
	w.model.Script(modeltest.Reply{Text: []string{"ok"}})
	c.prompt(sid, text("think hard"))
	if r := w.model.Requests(); r[len(r)-1].Model != "m-vision" || r[len(r)-1].Effort() != "high" {
		t.Errorf("the request went to %s with effort %q", r[len(r)-1].Model, r[len(r)-1].Effort())
	}

	// The text model takes no effort: the option goes, and the effort with it.
	c.call(MethodSessionSetConfig, map[string]any{"sessionId": sid, "configId": configModel, "value": "m-text"}, &set)
	if o := option(set.ConfigOptions, configModel); o == nil || o.CurrentValue != "m-text" || option(set.ConfigOptions, configEffort) != nil {
		t.Errorf("after the switch: %+v", set.ConfigOptions)
	}
	c.until("the model's config_option_update", func() bool {
		o := option(c.lastOptions(), configModel)
		return o != nil && o.CurrentValue == "m-text"
	})
	if n := len(c.updates(UpdateCurrentMode)); n != 0 {
		t.Errorf("a model switch announced a mode (%d current_mode_updates)", n)
	}
	w.model.Script(modeltest.Reply{Text: []string{"ok"}})
	c.prompt(sid, text("and now?"))
	if r := w.model.Requests(); r[len(r)-1].Model != "m-text" || r[len(r)-1].Effort() != "" {
		t.Errorf("after the switch the request went to %s with effort %q", r[len(r)-1].Model, r[len(r)-1].Effort())
	}

	for name, p := range map[string]map[string]any{
		"unknown model":   {"sessionId": sid, "configId": configModel, "value": "m-nope"},
		"effort it lacks": {"sessionId": sid, "configId": configEffort, "value": "high"},
		"unknown option":  {"sessionId": sid, "configId": "temperature", "value": "1"},
	} {
		err := c.tryCall(MethodSessionSetConfig, p, nil)
		if code := rpcCode(t, err); code != -32602 {
			t.Errorf("%s: code %d (%v)", name, code, err)
		}
		if name == "unknown option" && !strings.Contains(err.Error(), "mode, model") {
			t.Errorf("%s: the error does not name the options: %v", name, err)
		}
	}

	// /model is the same switch, announced the same way.
	res := c.prompt(sid, text("/model m-vision low"))
	if res.StopReason != StopEndTurn {
		t.Fatalf("/model: %q", res.StopReason)
	}
	c.until("/model's config_option_update", func() bool {
		o := option(c.lastOptions(), configEffort)
		return o != nil && o.CurrentValue == "low" && option(c.lastOptions(), configModel).CurrentValue == "m-vision"
	})
	c.close()

	// The next process opens the session with them.
	c2 := w.connect(nil)
	c2.initialize(nil)
	var loaded LoadSessionResponse
	c2.call(MethodSessionLoad, LoadSessionRequest{SessionID: sid, Cwd: w.ws, MCPServers: []MCPServer{}}, &loaded)
	if o := option(loaded.ConfigOptions, configModel); o == nil || o.CurrentValue != "m-vision" {
		t.Errorf("loaded model %+v", o)
	}
	if o := option(loaded.ConfigOptions, configEffort); o == nil || o.CurrentValue != "low" {
		t.Errorf("loaded effort %+v", o)
	}
}

// The reasoning summary streams as agent_thought_chunk, before the answer,
// and a load replays it.
func TestReasoningIsThoughtChunks(t *testing.T) {
	w := newWorld(t)
	c := w.connect(nil)
	c.initialize(nil)
	sid := c.newSession()
	w.model.Script(modeltest.Reply{Reasoning: []modeltest.Reasoning{{Summary: []string{"The user wants a greeting."}}}, Text: []string{"Hello."}})
	c.prompt(sid, text("greet me"))
	thought := func(c *client) string {
		var b strings.Builder
		for _, u := range c.updates(UpdateAgentThought) {
			b.WriteString(u["content"].(map[string]any)["text"].(string))
		}
		return b.String()
	}
	if got := thought(c); got != "The user wants a greeting." {
		t.Errorf("thought chunks %q", got)
	}
	first := c.index(isUpdate(UpdateAgentThought))
	if answer := c.index(isUpdate(UpdateAgentMessage)); first < 0 || answer < first {
		t.Errorf("the thought (frame %d) does not come before the answer (frame %d)", first, answer)
	}
	c.close()

	c2 := w.connect(nil)
	c2.initialize(nil)
	c2.call(MethodSessionLoad, LoadSessionRequest{SessionID: sid, Cwd: w.ws, MCPServers: []MCPServer{}}, nil)
	if got := thought(c2); got != "The user wants a greeting." {
		t.Errorf("replayed thought %q", got)
	}
}

// An image block reaches the model as an image, in its place among the
// texts; a model without images says so in initialize and refuses one,
// naming it, before anything is asked.
func TestImages(t *testing.T) {
	const png = "iVBORw0KGgo="
	w := newWorld(t)
	w.settings(twoModels)
	c := w.connect(nil)
	if init := c.initialize(nil); !init.AgentCapabilities.PromptCapabilities.Image {
		t.Error("promptCapabilities.image is false for a model that takes images")
	}
	sid := c.newSession()
	w.model.Script(modeltest.Reply{Text: []string{"a cat"}})
	img := map[string]any{"type": "image", "mimeType": "image/png", "data": png}
	if res := c.prompt(sid, text("what is this?"), img, text("be brief")); res.StopReason != StopEndTurn {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	parts := w.model.Requests()[0].InputParts()
	var kinds []string
	for _, p := range parts {
		kinds = append(kinds, p["type"].(string))
	}
	if !slices.Equal(kinds, []string{"input_text", "input_image", "input_text"}) || parts[1]["image_url"] != "data:image/png;base64,"+png ||
		!strings.Contains(parts[0]["text"].(string), "what is this?") || !strings.Contains(parts[2]["text"].(string), "be brief") {
		t.Errorf("the model was sent %v", parts)
	}

	for name, block := range map[string]map[string]any{
		"unknown type": {"type": "image", "mimeType": "image/bmp", "data": png},
		"not base64":   {"type": "image", "mimeType": "image/png", "data": "%%%"},
	} {
		err := c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{text("x"), block}}, nil)
		if code := rpcCode(t, err); code != -32602 || !strings.Contains(err.Error(), "prompt[1] (image)") {
			t.Errorf("%s: code %d (%v)", name, code, err)
		}
	}
	c.call(MethodSessionSetConfig, map[string]any{"sessionId": sid, "configId": configModel, "value": "m-text"}, nil)
	err := c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{text("x"), img}}, nil)
	if code := rpcCode(t, err); code != -32602 || !strings.Contains(err.Error(), "m-text does not take images") {
		t.Errorf("an image for the text model: code %d (%v)", code, err)
	}
	if n := len(w.model.Requests()); n != 1 {
		t.Errorf("a refused image reached the model (%d requests)", n)
	}

	w2 := newWorld(t)
	w2.settings(`{"models":[{"id":"m-text","contextWindow":32000,"images":false}]}`)
	c2 := w2.connect(nil)
	if init := c2.initialize(nil); init.AgentCapabilities.PromptCapabilities.Image {
		t.Error("promptCapabilities.image is true for a model without images")
	}
}

// agent-shell's model picker: the session's "models" block (ACP's unstable
// session model API) lists kin's models with the session's current one,
// and session/set_model switches it, the same switch as the model config
// option: announced as config_option_update, used from the next request,
// kept with the session (load answers the same models block).
func TestTheModelsBlockAndSetModelAreTheModelOption(t *testing.T) {
	w := newWorld(t)
	w.settings(twoModels)
	c := w.connect(nil)
	c.initialize(nil)
	var opened NewSessionResponse
	c.call(MethodSessionNew, map[string]any{"cwd": w.ws, "mcpServers": []any{}}, &opened)
	sid := opened.SessionID
	if opened.Models == nil || opened.Models.CurrentModelID != "m-vision" || len(opened.Models.AvailableModels) != 2 ||
		opened.Models.AvailableModels[1].ModelID != "m-text" || opened.Models.AvailableModels[1].Name != "Text" {
		t.Fatalf("models block %+v", opened.Models)
	}
	if m := option(opened.ConfigOptions, configModel); m.CurrentValue != opened.Models.CurrentModelID {
		t.Errorf("the two views disagree: %q and %q", m.CurrentValue, opened.Models.CurrentModelID)
	}

	c.call(MethodSessionSetModel, SetModelRequest{SessionID: sid, ModelID: "m-text"}, nil)
	c.until("set_model's config_option_update", func() bool {
		o := option(c.lastOptions(), configModel)
		return o != nil && o.CurrentValue == "m-text"
	})
	w.model.Script(modeltest.Reply{Text: []string{"ok"}})
	c.prompt(sid, text("who answers?"))
	if r := w.model.Requests(); r[len(r)-1].Model != "m-text" {
		t.Errorf("after set_model the request went to %s", r[len(r)-1].Model)
	}
	err := c.tryCall(MethodSessionSetModel, SetModelRequest{SessionID: sid, ModelID: "m-nope"}, nil)
	if code := rpcCode(t, err); code != -32602 || !strings.Contains(err.Error(), "m-nope") {
		t.Errorf("an unknown model: %d %v", code, err)
	}
	// A switch through the config option shows in the models block of
	// the next load.
	c.call(MethodSessionSetConfig, map[string]any{"sessionId": sid, "configId": configModel, "value": "m-vision"}, nil)
	var loaded LoadSessionResponse
	c.call(MethodSessionLoad, LoadSessionRequest{SessionID: sid, Cwd: w.ws, MCPServers: []MCPServer{}}, &loaded)
	if loaded.Models == nil || loaded.Models.CurrentModelID != "m-vision" {
		t.Errorf("loaded models block %+v", loaded.Models)
	}
}
