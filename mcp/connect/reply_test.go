package connect

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestCheckReply(t *testing.T) {
	for _, tc := range []struct {
		name, msg, method string
		unhandled         string // the resultType named, "" = passed as it is
	}{
		{"no type", `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, "tools/call", ""},
		{"complete", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}`, "tools/list", ""},
		{"input on call", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{}}}`, "tools/call", ""},
		{"input on list", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","tools":[]}}`, "tools/list", "input_required"},
		{"task", `{"jsonrpc":"2.0","id":"a","result":{"resultType":"task","taskId":"t"}}`, "tools/call", "task"},
		{"task on list", `{"jsonrpc":"2.0","id":2,"result":{"resultType":"task","tools":[]}}`, "tools/list", "task"},
		{"empty string", `{"jsonrpc":"2.0","id":2,"result":{"resultType":"","content":[]}}`, "tools/call", ""},
		{"object", `{"jsonrpc":"2.0","id":2,"result":{"resultType":{"a":1}}}`, "tools/call", `{"a":1}`},
		{"a request", `{"jsonrpc":"2.0","id":2,"method":"elicitation/create","params":{"resultType":"task"}}`, "", ""},
		{"an error", `{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"resultType"}}`, "", ""},
		{"in content", `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"\"resultType\":\"task\""}]}}`, "tools/call", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := checkReply([]byte(tc.msg+"\n"), tc.method, nil, nil)
			if tc.unhandled == "" {
				if string(out) != tc.msg+"\n" {
					t.Fatalf("changed: %s", out)
				}
				return
			}
			var resp struct {
				ID    json.RawMessage `json:"id"`
				Error struct {
					Code    int64           `json:"code"`
					Message string          `json:"message"`
					Data    json.RawMessage `json:"data"`
				} `json:"error"`
			}
			if err := json.Unmarshal(out, &resp); err != nil || resp.Error.Code != CodeUnhandledResult || !bytes.HasSuffix(out, []byte("\n")) {
				t.Fatalf("not an error: %s", out)
			}
			var in struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.Unmarshal([]byte(tc.msg), &in)
			if string(resp.ID) != string(in.ID) {
				t.Fatalf("id %s, want %s", resp.ID, in.ID)
			}
			if !strings.Contains(resp.Error.Message, tc.method) || !strings.Contains(resp.Error.Message, "which kin does not handle") {
				t.Fatalf("message %q", resp.Error.Message)
			}
			werr := wireErr(resp.Error.Code, resp.Error.Message, resp.Error.Data)
			u, ok := UnhandledResult(werr)
			if !ok || u.ResultType != tc.unhandled || u.Method != tc.method {
				t.Fatalf("kept %+v %v", u, ok)
			}
			if _, again := UnhandledResult(werr); again {
				t.Fatal("taken twice")
			}
		})
	}
}

// On stdio the reply carries only the id: the method comes from what kin
// wrote.
func TestStdioReplyMethod(t *testing.T) {
	ms := &methods{}
	var sink bytes.Buffer
	w := &sentWriter{w: &sink, m: ms}
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{}}` + "\n"))
	f := newNoiseFilter(io.NopCloser(strings.NewReader(`{"jsonrpc":"2.0","id":5,"result":{"resultType":"input_required","tools":[]}}`+"\n")), nil)
	f.sent = ms
	out, _ := io.ReadAll(f)
	if !bytes.Contains(out, []byte(`"error"`)) || !bytes.Contains(out, []byte("tools/list")) {
		t.Fatalf("input_required on tools/list passed: %s", out)
	}
	if sink.Len() == 0 {
		t.Fatal("nothing written through")
	}
}

// HTTP: a JSON body whole, however it is laid out, and an event stream's
// data lines one by one.
func TestReplyBody(t *testing.T) {
	pretty := "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 3,\n  \"result\": {\n    \"resultType\": \"task\"\n  }\n}\n"
	resp := &http.Response{Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(pretty))}
	out, err := io.ReadAll(newReplyBody(resp, "tools/call", nil))
	if err != nil || !bytes.Contains(out, []byte(`"code":-32090`)) {
		t.Fatalf("%v %s", err, out)
	}
	long := strings.Repeat("y", 200<<10)
	stream := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"resultType\":\"task\",\"pad\":\"" + long + "\"}}\n\n"
	resp = &http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(stream))}
	out, err = io.ReadAll(newReplyBody(resp, "tools/call", nil))
	if err != nil || !bytes.Contains(out, []byte(`"code":-32090`)) || !bytes.Contains(out, []byte("notifications/progress")) || bytes.Contains(out, []byte(long)) {
		t.Fatalf("%v %.300s", err, out)
	}
	if !bytes.HasPrefix(out, []byte("event: message\ndata: {")) {
		t.Fatalf("stream framing lost: %.100s", out)
	}
}

func wireErr(code int64, msg string, data json.RawMessage) error {
	return &jsonrpc.Error{Code: code, Message: msg, Data: data}
}
