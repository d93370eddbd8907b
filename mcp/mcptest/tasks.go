package mcptest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// TaskServer is a purpose-built Tasks-extension server (2026-07-28, plain
// JSON over HTTP): its one tool, "job", answers every call with a task
// (resultType "task"), whose states tasks/get then reports as State says.
type TaskServer struct {
	// State is the task's state at the nth tasks/get (n from 1), given the
	// input responses received so far by key: status, statusMessage and
	// the status's own fields (inputRequests, result, error).
	State func(n int, answers map[string]json.RawMessage) map[string]any
	// PollMs is the pollIntervalMs the task asks for (0: 10).
	PollMs int
	// Calls, Gets, Updates and Cancels count the requests received.
	Calls, Gets, Updates, Cancels atomic.Int64
	// Gone makes tasks/get answer that the task is not known (it expired
	// and the server dropped it).
	Gone atomic.Bool
	// GoneMessage is the message of that answer ("": "unknown task <id>
	// (it expired)").
	GoneMessage string
	// ID is the id of the task it creates (empty: TaskID).
	ID string

	mu      sync.Mutex
	answers map[string]json.RawMessage
}

// WorkingUntil is a TaskServer's State: "working" ("<step> n" at the nth
// tasks/get) until done is set, then "completed" with text as its result.
func WorkingUntil(done *atomic.Bool, step, text string) func(int, map[string]json.RawMessage) map[string]any {
	return func(n int, _ map[string]json.RawMessage) map[string]any {
		if !done.Load() {
			return map[string]any{"status": "working", "statusMessage": fmt.Sprintf("%s %d", step, n)}
		}
		return map[string]any{"status": "completed", "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}}
	}
}

// TaskID is the id of every task a TaskServer creates, unless its ID says
// otherwise.
const TaskID = "task-7f3a"

// ServeHTTP implements http.Handler.
func (s *TaskServer) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(req.Body)
	var in rawRequest
	if json.Unmarshal(body, &in) != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	if len(in.ID) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	poll := s.PollMs
	if poll == 0 {
		poll = 10
	}
	id := s.ID
	if id == "" {
		id = TaskID
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	base := func() map[string]any {
		return map[string]any{"taskId": id, "createdAt": now, "lastUpdatedAt": now, "ttlMs": 600000, "pollIntervalMs": poll}
	}
	var result any
	var rpcErr *RPCError
	switch in.Method {
	case "server/discover":
		result = map[string]any{
			"supportedVersions": []string{"2026-07-28"},
			"capabilities":      map[string]any{"tools": map[string]any{}, "extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
			"_meta":             map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "tasks", "version": "1"}},
		}
	case "tools/list":
		result = map[string]any{"tools": []map[string]any{Tool("job", "A long job.", false)}}
	case "tools/call":
		s.Calls.Add(1)
		r := base()
		r["resultType"], r["status"], r["statusMessage"] = "task", "working", "queued"
		result = r
	case "tasks/get":
		n := int(s.Gets.Add(1))
		if s.Gone.Load() {
			rpcErr = &RPCError{Code: -32602, Message: "unknown task " + id + " (it expired)"}
			if s.GoneMessage != "" {
				rpcErr.Message = s.GoneMessage
			}
			break
		}
		s.mu.Lock()
		answers := map[string]json.RawMessage{}
		for k, v := range s.answers {
			answers[k] = v
		}
		s.mu.Unlock()
		r := base()
		r["resultType"] = "complete"
		for k, v := range s.State(n, answers) {
			r[k] = v
		}
		result = r
	case "tasks/update":
		s.Updates.Add(1)
		var p struct {
			InputResponses map[string]json.RawMessage `json:"inputResponses"`
		}
		_ = json.Unmarshal(in.Params, &p)
		s.mu.Lock()
		if s.answers == nil {
			s.answers = map[string]json.RawMessage{}
		}
		for k, v := range p.InputResponses {
			s.answers[k] = v
		}
		s.mu.Unlock()
		result = map[string]any{"resultType": "complete"}
	case "tasks/cancel":
		s.Cancels.Add(1)
		result = map[string]any{"resultType": "complete"}
	default:
		rpcErr = &RPCError{Code: -32601, Message: "method not found"}
	}
	out := map[string]any{"jsonrpc": "2.0", "id": in.ID}
	if rpcErr != nil {
		out["error"] = rpcErr
	} else {
		out["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}
