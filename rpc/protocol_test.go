package rpc

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// wireTypes names the Go types of every method's params and result and of
// every notification's params. A method added to the route table without
// an entry here fails TestProtocolCoverage.
var wireTypes = map[string]struct{ params, result any }{
	"initialize":          {InitializeParams{}, InitializeResult{}},
	"initialized":         {Empty{}, nil},
	"shutdown":            {nil, nil},
	"exit":                {nil, nil},
	"$/cancelRequest":     {CancelParams{}, nil},
	"session/new":         {SessionNewParams{}, SessionResult{}},
	"session/list":        {SessionListParams{}, SessionListResult{}},
	"session/resume":      {SessionResumeParams{}, SessionResumeResult{}},
	"session/delete":      {SessionIDParams{}, Empty{}},
	"turn/start":          {TurnStartParams{}, TurnStartResult{}},
	"turn/cancel":         {SessionIDParams{}, TurnCancelResult{}},
	"turn/undo":           {TurnUndoParams{}, TurnUndoResult{}},
	MethodTurnSteer:       {TurnSteerParams{}, TurnSteerResult{}},
	NotifyTurnSteered:     {TurnSteered{}, nil},
	MethodTurnRollback:    {TurnRollbackParams{}, TurnRollbackResult{}},
	MethodSessionFork:     {SessionForkParams{}, SessionForkResult{}},
	MethodReviewStart:     {ReviewStartParams{}, ReviewStartResult{}},
	NotifyReviewFinding:   {ReviewFinding{}, nil},
	"session/configure":   {SessionConfigureParams{}, SessionConfigureResult{}},
	"commands/list":       {CommandsListParams{}, CommandsListResult{}},
	"approval/respond":    {ApprovalRespondParams{}, Empty{}},
	"elicitation/respond": {ElicitationRespondParams{}, Empty{}},
	"mcp/list":            {nil, MCPListResult{}},
	"mcp/add":             {MCPAddParams{}, Empty{}},
	"mcp/update":          {MCPAddParams{}, Empty{}},
	"mcp/remove":          {MCPRemoveParams{}, Empty{}},
	"mcp/setEnabled":      {MCPSetEnabledParams{}, Empty{}},
	"mcp/adopt":           {MCPAdoptParams{}, Empty{}},
	"mcp/apply":           {nil, MCPServersResult{}},
	"mcp/reload":          {nil, MCPServersResult{}},
	"mcp/check":           {MCPNameParams{}, MCPCheckResult{}},
	"mcp/login":           {MCPNameParams{}, MCPLoginResult{}},
	"grants/list":         {nil, GrantsListResult{}},
	"grants/revoke":       {GrantIDParams{}, Empty{}},
	MethodSkillsList:      {SkillsListParams{}, SkillsListResult{}},
	MethodTrustList:       {nil, TrustListResult{}},
	MethodTrustRevoke:     {TrustRevokeParams{}, Empty{}},
	MethodWorktreeStatus:  {SessionIDParams{}, WorktreeStatusResult{}},
	MethodWorktreeApply:   {SessionIDParams{}, WorktreeApplyResult{}},
	MethodWorktreeRemove:  {WorktreeRemoveParams{}, WorktreeRemoveResult{}},
	MethodModelsList:      {nil, ModelsListResult{}},
	MethodSessionCompact:  {SessionIDParams{}, SessionCompactResult{}},

	NotifyTurnStarted:         {TurnStarted{}, nil},
	NotifyTurnDelta:           {TurnDelta{}, nil},
	NotifyTurnReasoning:       {TurnReasoning{}, nil},
	NotifyTurnUsage:           {TurnUsage{}, nil},
	NotifyTurnToolCall:        {TurnToolCall{}, nil},
	NotifyTurnCompleted:       {TurnCompleted{}, nil},
	NotifyTurnPlan:            {TurnPlan{}, nil},
	NotifyCommandsChanged:     {CommandsChanged{}, nil},
	NotifyApprovalRequest:     {ApprovalRequest{}, nil},
	NotifyApprovalResolved:    {ApprovalResolved{}, nil},
	NotifyElicitationRequest:  {ElicitationRequest{}, nil},
	NotifyElicitationResolved: {ElicitationResolved{}, nil},
	NotifyMCPStatus:           {MCPStatus{}, nil},
	NotifyNotice:              {Notice{}, nil},
	NotifyLogMessage:          {LogMessage{}, nil},

	NotifyDidOpen:        {DidOpenTextDocumentParams{}, nil},
	NotifyDidChange:      {DidChangeTextDocumentParams{}, nil},
	NotifyDidClose:       {DidCloseTextDocumentParams{}, nil},
	MethodApplyEdit:      {ApplyWorkspaceEditParams{}, ApplyWorkspaceEditResult{}},
	NotifyDidChangeFiles: {DidChangeFilesParams{}, nil},

	MethodMCPResources:          {MCPResourcesParams{}, MCPResourcesResult{}},
	MethodCompletionComplete:    {CompletionCompleteParams{}, CompletionCompleteResult{}},
	MethodMCPReadResource:       {MCPReadResourceParams{}, MCPReadResourceResult{}},
	NotifyMCPResourceUpdated:    {MCPResourceUpdated{}, nil},
	MethodMCPAcceptInstructions: {MCPAcceptInstructionsParams{}, MCPAcceptInstructionsResult{}}, // mcpinstr.go
}

// protocolHeading is a PROTOCOL.md method heading:
// ### `session/new` (request)
var protocolHeading = regexp.MustCompile("^### (.*) \\((request|notification)s?(, [^)]*)?\\)\\s*$")

// headings returns each method PROTOCOL.md documents, with its kind and
// the text of its section.
func headings(t *testing.T) map[string][2]string {
	b, err := os.ReadFile("PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]string{}
	var cur []string
	var kind string
	var body strings.Builder
	flush := func() {
		for _, m := range cur {
			out[m] = [2]string{kind, body.String()}
		}
		body.Reset()
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "#") {
			flush()
			cur = nil
			if !strings.HasPrefix(line, "### `") {
				continue // a section, or a note such as "### For the shims"
			}
			m := protocolHeading.FindStringSubmatch(line)
			if m == nil {
				t.Errorf("PROTOCOL.md: heading %q does not read ### `method` (request|notification)", line)
				continue
			}
			kind = m[2]
			for _, name := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(m[1], -1) {
				if _, dup := out[name[1]]; dup {
					t.Errorf("PROTOCOL.md: %s has two headings", name[1])
				}
				cur = append(cur, name[1])
			}
			continue
		}
		body.WriteString(line + "\n")
	}
	flush()
	return out
}

type goldenFrame struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestProtocolCoverage keeps the three descriptions of the wire in step:
// the route table (routes, the notifications kin handles and sends), the
// golden frames in testdata/golden (one file per method, regenerated by
// TestGoldenFrames -update) and PROTOCOL.md's headings, each with a JSON
// example. Every golden frame must also decode into its Go type with no
// field left over.
func TestProtocolCoverage(t *testing.T) {
	table := map[string]string{}
	for m := range routes {
		table[m] = "request"
	}
	for _, m := range kinRequests {
		table[m] = "request"
	}
	for _, m := range append(append([]string{}, editorNotifications...), kinNotifications...) {
		table[m] = "notification"
	}
	for m := range documentNotifications {
		if table[m] != "notification" {
			t.Errorf("%s is handled but not in editorNotifications", m)
		}
	}
	docs := headings(t)
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	golden := map[string][]goldenFrame{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var gf struct {
			Method string        `json:"method"`
			Frames []goldenFrame `json:"frames"`
		}
		if err := json.Unmarshal(b, &gf); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		want := strings.ReplaceAll(strings.ReplaceAll(gf.Method, "$", ""), "/", "_") + ".json"
		if filepath.Base(f) != want {
			t.Errorf("%s holds %s, which belongs in %s", f, gf.Method, want)
		}
		golden[gf.Method] = gf.Frames
	}

	for _, m := range union(table, docs, golden) {
		kind, routed := table[m]
		doc, documented := docs[m]
		frames, recorded := golden[m]
		switch {
		case !routed:
			t.Errorf("%s is in PROTOCOL.md or testdata/golden but not in the route table", m)
			continue
		case !documented:
			t.Errorf("%s (%s) has no ### heading in PROTOCOL.md", m, kind)
		case doc[0] != kind:
			t.Errorf("PROTOCOL.md calls %s a %s; it is a %s", m, doc[0], kind)
		case !strings.Contains(compact(doc[1]), `"method":"`+m+`"`):
			t.Errorf("PROTOCOL.md's section on %s has no JSON example of it", m)
		}
		if !recorded {
			t.Errorf("%s has no golden frames (run go test ./rpc -run Golden -update)", m)
			continue
		}
		checkFrames(t, m, kind, frames)
	}
}

func union(sets ...any) []string {
	seen := map[string]bool{}
	for _, s := range sets {
		switch s := s.(type) {
		case map[string]string:
			for k := range s {
				seen[k] = true
			}
		case map[string][2]string:
			for k := range s {
				seen[k] = true
			}
		case map[string][]goldenFrame:
			for k := range s {
				seen[k] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func compact(s string) string {
	return strings.Join(strings.Fields(s), "")
}

// checkFrames checks one method's frames: JSON-RPC 2.0, of that method,
// each request answered by the next frame, at least one success, and every
// params and result decoding into its Go type exactly.
func checkFrames(t *testing.T, m, kind string, frames []goldenFrame) {
	types, ok := wireTypes[m]
	if !ok {
		t.Errorf("%s has no entry in wireTypes", m)
		return
	}
	ok = false
	for i := 0; i < len(frames); i++ {
		f := frames[i]
		if f.JSONRPC != "2.0" || f.Method != m {
			t.Errorf("%s frame %d: jsonrpc %q method %q", m, i, f.JSONRPC, f.Method)
			continue
		}
		strict(t, m+" params", f.Params, types.params)
		if kind == "notification" {
			if f.ID != nil {
				t.Errorf("%s frame %d: a notification with an id", m, i)
			}
			ok = true
			continue
		}
		if i+1 >= len(frames) || !bytes.Equal(frames[i+1].ID, f.ID) || frames[i+1].Method != "" {
			t.Errorf("%s frame %d: a request not followed by its response", m, i)
			continue
		}
		i++
		resp := frames[i]
		switch {
		case resp.Error != nil:
			if resp.Error.Code == 0 || resp.Error.Message == "" {
				t.Errorf("%s: an error with no code or message", m)
			}
		default:
			strict(t, m+" result", resp.Result, types.result)
			ok = true
		}
	}
	if !ok {
		t.Errorf("%s: no golden frame shows it succeeding", m)
	}
}

// strict decodes raw into a new value of v's type, refusing fields the
// type does not have; v nil means raw must be absent or null.
func strict(t *testing.T, what string, raw json.RawMessage, v any) {
	t.Helper()
	if v == nil {
		if len(raw) != 0 && string(raw) != "null" && string(raw) != "{}" {
			t.Errorf("%s: want none, got %s", what, raw)
		}
		return
	}
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	target := newOf(v)
	if err := dec.Decode(target); err != nil {
		t.Errorf("%s does not decode into %T: %v", what, v, err)
	}
}

func newOf(v any) any {
	return reflect.New(reflect.TypeOf(v)).Interface()
}
