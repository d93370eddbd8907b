package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/permission"
)

// kin's session settings in ACP's views of them: the session modes
// (session/set_mode, current_mode_update; ACP's older mechanism, which
// clients still read), the session's models (session/set_model and the
// "models" block of session/new, load and resume: ACP's unstable session
// model API, removed from the schema but what agent-shell's model picker
// reads) and the config options (session/set_config_option,
// config_option_update): the mode (category mode), the model (model: kin's
// models/list) and the reasoning effort (thought_level: the model's
// efforts, offered only for a model that takes one). The views are kept
// in step: whatever changes a setting (any of the requests, or a /mode or
// /model prompt) announces it, so a client reading either is never left
// with a stale one (the models block has no update of its own: its client
// learns from set_model's answer, and the model config option says every
// change). Each maps onto kin's session/configure.

// Config option ids: kin's session/configure field names, except the
// effort, which is ACP's category name (clients know it by that).
const (
	configMode   = "mode"
	configModel  = "model"
	configEffort = "thought_level"
)

// effortDefault is the thought_level value for no effort of the session's
// own: the model's default (kin sends none).
const effortDefault = "default"

// sessionModes are kin's modes, in the order a person escalates them.
var sessionModes = []SessionMode{
	{ID: string(permission.ModeAsk), Name: "Ask", Description: "kin reads and searches; it changes nothing and runs no command"},
	{ID: string(permission.ModeAgent), Name: "Agent", Description: "every change and command asks for your approval"},
	{ID: string(permission.ModeAutoEdit), Name: "Auto-edit", Description: "file edits inside the workspace are applied without asking; commands and sensitive paths still ask"},
}

// modeOf is a recorded mode as kin runs it ("" is agent).
func modeOf(recorded string) permission.Mode {
	m, err := permission.ParseMode(recorded)
	if err != nil {
		return permission.ModeAgent // a log from a newer kin: the gate's default
	}
	return m
}

// modeState is the session's modes as session/new, load and resume answer
// them.
func modeState(ss *session) *SessionModeState {
	return &SessionModeState{CurrentModeID: string(ss.currentMode()), AvailableModes: sessionModes}
}

// modelState is the session's models as the unstable session model API
// has them: kin's models (as the model config option lists them) and the
// session's. Nil when kin has no catalog to offer.
func (s *Server) modelState(ss *session) *SessionModelState {
	svc, _ := s.service()
	if svc == nil {
		return nil
	}
	cat := svc.Models()
	if len(cat.Models) == 0 {
		return nil
	}
	ss.mu.Lock()
	id := ss.model
	ss.mu.Unlock()
	cur, ok := cat.Find(id)
	if !ok {
		cur = cat.DefaultConfig()
	}
	out := &SessionModelState{CurrentModelID: cur.Model, AvailableModels: make([]ModelInfo, 0, len(cat.Models))}
	for _, m := range cat.Models {
		out.AvailableModels = append(out.AvailableModels, ModelInfo{ModelID: m.Model, Name: m.DisplayName(), Description: modelDescription(m)})
	}
	return out
}

// handleSetModel is session/set_model: the same change as the model config
// option (kin's session/configure), announced as config_option_update.
func handleSetModel(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p SetModelRequest
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	ss, err := s.lookup(p.SessionID)
	if err != nil {
		return nil, err
	}
	if p.ModelID == "" {
		return nil, invalid("invalid params: modelId is required")
	}
	if err := s.configure(ss, agent.SessionConfig{Model: &p.ModelID}); err != nil {
		return nil, err
	}
	return Empty{}, nil
}

// configOptions are the session's settings as config options.
func (s *Server) configOptions(ss *session) []ConfigOption {
	modes := make([]ConfigChoice, 0, len(sessionModes))
	for _, m := range sessionModes {
		modes = append(modes, ConfigChoice{Value: m.ID, Name: m.Name, Description: m.Description})
	}
	out := []ConfigOption{{ID: configMode, Name: "Mode", Description: "How much kin may do without asking", Category: "mode",
		Type: "select", CurrentValue: string(ss.currentMode()), Options: modes}}
	svc, _ := s.service()
	if svc == nil {
		return out
	}
	cat := svc.Models()
	if len(cat.Models) == 0 {
		return out
	}
	ss.mu.Lock()
	id, effort := ss.model, ss.effort
	ss.mu.Unlock()
	cur, ok := cat.Find(id)
	if !ok { // a model kin no longer has: the session runs on the default
		cur = cat.DefaultConfig()
	}
	models := make([]ConfigChoice, 0, len(cat.Models))
	for _, m := range cat.Models {
		models = append(models, ConfigChoice{Value: m.Model, Name: m.DisplayName(), Description: modelDescription(m)})
	}
	out = append(out, ConfigOption{ID: configModel, Name: "Model", Description: "The model kin asks, from the next request on", Category: "model",
		Type: "select", CurrentValue: cur.Model, Options: models})
	if len(cur.Efforts) == 0 {
		return out // the model takes no effort setting: nothing to choose
	}
	efforts := []ConfigChoice{{Value: effortDefault, Name: "Default", Description: "the model's own reasoning effort"}}
	for _, e := range cur.Efforts {
		efforts = append(efforts, ConfigChoice{Value: e, Name: e})
	}
	if effort == "" {
		effort = effortDefault
	}
	return append(out, ConfigOption{ID: configEffort, Name: "Reasoning effort", Description: "How hard the model thinks before it answers",
		Category: "thought_level", Type: "select", CurrentValue: effort, Options: efforts})
}

// modelDescription says what a person choosing a model needs to know: its
// window, whether it takes images, and what is missing to use it.
func modelDescription(m model.Config) string {
	d := fmt.Sprintf("%d-token window", m.Window())
	if m.NoImages {
		d += ", no images"
	}
	if miss := m.Missing(); miss != "" {
		d += "; not usable yet: " + miss
	}
	return d
}

func (ss *session) currentMode() permission.Mode {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.mode
}

// configure applies a change through kin's session/configure and
// announces what changed in both views.
func (s *Server) configure(ss *session, c agent.SessionConfig) error {
	svc, _ := s.service()
	got, err := svc.Configure(ss.id, c, ss.roots)
	if err != nil {
		return err
	}
	s.configured(ss, got)
	return nil
}

// configured records a session's settings after a change (session/configure's
// answer) and announces what changed: the mode in both views, the model
// and effort as config options.
func (s *Server) configured(ss *session, c agent.Configured) {
	ss.mu.Lock()
	modeChanged := ss.mode != c.Mode
	changed := modeChanged || ss.model != c.Model || ss.effort != c.Effort
	ss.mode, ss.model, ss.effort = c.Mode, c.Model, c.Effort
	ss.mu.Unlock()
	if !changed {
		return
	}
	s.log.Info("session configured", zap.String("session", ss.id), zap.String("mode", string(c.Mode)),
		zap.String("model", c.Model), zap.String("effort", c.Effort))
	if modeChanged {
		s.update(ss.id, CurrentModeUpdate{SessionUpdate: UpdateCurrentMode, CurrentModeID: string(c.Mode)})
	}
	s.update(ss.id, ConfigOptionUpdate{SessionUpdate: UpdateConfigOption, ConfigOptions: s.configOptions(ss)})
}

func handleSetMode(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p SetModeRequest
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	ss, err := s.lookup(p.SessionID)
	if err != nil {
		return nil, err
	}
	if err := checkMode(p.ModeID); err != nil {
		return nil, err
	}
	if err := s.configure(ss, agent.SessionConfig{Mode: permission.Mode(p.ModeID)}); err != nil {
		return nil, err
	}
	return Empty{}, nil
}

// checkMode refuses what is not one of kin's modes (an empty one too: a
// client must say which it wants).
func checkMode(id string) error {
	for _, m := range sessionModes {
		if m.ID == id {
			return nil
		}
	}
	return invalid("invalid params: kin has no mode %q (its modes are ask, agent and auto-edit)", id)
}

func handleSetConfigOption(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p SetConfigOptionRequest
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	ss, err := s.lookup(p.SessionID)
	if err != nil {
		return nil, err
	}
	// A string value is a value id whatever its type says (as the schema
	// reads an unknown type); kin has no boolean options.
	var value string
	if p.Type == "boolean" || json.Unmarshal(p.Value, &value) != nil {
		return nil, invalid("invalid params: %s takes one of its options' values (a string); kin has no boolean options", p.ConfigID)
	}
	switch p.ConfigID {
	case configMode:
		if err := checkMode(value); err != nil {
			return nil, err
		}
		if err := s.configure(ss, agent.SessionConfig{Mode: permission.Mode(value)}); err != nil {
			return nil, err
		}
	case configModel:
		if err := s.configure(ss, agent.SessionConfig{Model: &value}); err != nil {
			return nil, err
		}
	case configEffort:
		if value == effortDefault {
			value = ""
		}
		if err := s.configure(ss, agent.SessionConfig{Effort: &value}); err != nil {
			return nil, err
		}
	default:
		var ids []string
		for _, o := range s.configOptions(ss) {
			ids = append(ids, o.ID)
		}
		return nil, invalid("invalid params: kin has no config option %q (it has %s)", p.ConfigID, strings.Join(ids, ", "))
	}
	return SetConfigOptionResponse{ConfigOptions: s.configOptions(ss)}, nil
}
