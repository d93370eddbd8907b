package agent

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
)

// PlanToolName is the plan tool's name; MCP tools may not take it.
const PlanToolName = "update_plan"

// What a plan may hold: enough for real work, small enough to record whole
// at every update.
const (
	maxPlanEntries = 50
	maxPlanContent = 500 // characters per step
)

// Plan statuses and priorities.
const (
	PlanPending    = "pending"
	PlanInProgress = "in_progress"
	PlanCompleted  = "completed"
)

//go:embed plan.md
var planDescription string

const planSchema = `{
  "type": "object",
  "properties": {
    "entries": {
      "type": "array",
      "description": "Every step of the plan, in order.",
      "items": {
        "type": "object",
        "properties": {
          "content": {"type": "string", "description": "What the step does, in one short sentence."},
          "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
          "priority": {"type": "string", "enum": ["high", "medium", "low"]}
        },
        "required": ["content", "status"],
        "additionalProperties": false
      }
    }
  },
  "required": ["entries"],
  "additionalProperties": false
}`

// PlanUpdate is the whole plan after an update_plan call (turn/plan).
type PlanUpdate struct {
	SessionID string              `json:"sessionId"`
	TurnID    string              `json:"turnId"`
	Entries   []session.PlanEntry `json:"entries"`
}

// planTool is update_plan for one turn: it records the plan and reports it,
// and needs no approval because it changes nothing.
type planTool struct{ t *turn }

func (planTool) Spec() tool.Spec {
	return tool.Spec{Name: PlanToolName, Description: strings.TrimSpace(planDescription),
		Parameters: json.RawMessage(planSchema), Kind: tool.KindOther}
}

// ReadOnly implements tool.ReadOnlyTool: the ask mode offers it.
func (planTool) ReadOnly() bool { return true }

func (p planTool) Prepare(_ context.Context, env tool.Env, args json.RawMessage) (*tool.Action, error) {
	entries, err := parsePlan(args)
	if err != nil {
		return nil, err
	}
	return &tool.Action{Run: func(context.Context, func(string)) tool.Result {
		return p.t.setPlan(env.CallID, entries)
	}}, nil
}

// parsePlan checks update_plan's arguments, with messages a model can act on.
func parsePlan(args json.RawMessage) ([]session.PlanEntry, error) {
	var in struct {
		Entries *[]session.PlanEntry `json:"entries"`
	}
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("%s: the arguments must be {\"entries\": [{\"content\", \"status\", \"priority\"?}, …]}: %v", PlanToolName, err)
	}
	if in.Entries == nil {
		return nil, fmt.Errorf("%s: the argument \"entries\" is required", PlanToolName)
	}
	entries := *in.Entries
	if len(entries) > maxPlanEntries {
		return nil, fmt.Errorf("%s: %d steps; a plan has at most %d", PlanToolName, len(entries), maxPlanEntries)
	}
	for i, e := range entries {
		n := i + 1
		switch {
		case strings.TrimSpace(e.Content) == "":
			return nil, fmt.Errorf("%s: step %d has no content", PlanToolName, n)
		case utf8.RuneCountInString(e.Content) > maxPlanContent:
			return nil, fmt.Errorf("%s: step %d is longer than %d characters; say it in one short sentence", PlanToolName, n, maxPlanContent)
		case e.Status != PlanPending && e.Status != PlanInProgress && e.Status != PlanCompleted:
			return nil, fmt.Errorf("%s: step %d has status %q; use pending, in_progress or completed", PlanToolName, n, e.Status)
		case e.Priority != "" && e.Priority != "high" && e.Priority != "medium" && e.Priority != "low":
			return nil, fmt.Errorf("%s: step %d has priority %q; use high, medium or low", PlanToolName, n, e.Priority)
		}
	}
	if entries == nil {
		entries = []session.PlanEntry{}
	}
	return entries, nil
}

// setPlan records the plan, keeps it as the session's, and reports it.
func (t *turn) setPlan(callID string, entries []session.PlanEntry) tool.Result {
	if _, ok := t.record(session.Record{Type: session.TypePlan, CallID: callID, Entries: entries}); !ok {
		return tool.Failed(PlanToolName + ": not recorded: kin could not save this session")
	}
	t.sess.mu.Lock()
	t.sess.plan = entries
	t.sess.mu.Unlock()
	t.events().Plan(PlanUpdate{SessionID: t.sess.id, TurnID: t.id, Entries: entries})
	return tool.Result{Status: tool.StatusCompleted, Output: "Plan updated: " + planSummary(entries) + "."}
}

// planSummary counts steps by status: "3 steps (1 completed, 1 in progress, 1 pending)".
func planSummary(entries []session.PlanEntry) string {
	if len(entries) == 0 {
		return "no steps"
	}
	count := map[string]int{}
	for _, e := range entries {
		count[e.Status]++
	}
	var parts []string
	for _, s := range []string{PlanCompleted, PlanInProgress, PlanPending} {
		if count[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[s], strings.ReplaceAll(s, "_", " ")))
		}
	}
	steps := "steps"
	if len(entries) == 1 {
		steps = "step"
	}
	return fmt.Sprintf("%d %s (%s)", len(entries), steps, strings.Join(parts, ", "))
}

// Plan returns the session's current plan (nil when the model made none):
// what /plan shows.
func (s *Service) Plan(sessionID string, defaultRoots []string) ([]session.PlanEntry, error) {
	sess, _, err := s.open(sessionID, defaultRoots, session.Query{})
	if err != nil {
		return nil, err
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.plan, nil
}
