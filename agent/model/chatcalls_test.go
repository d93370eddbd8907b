package model_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/modeltest"
)

// TestCallsAtOneIndexAreToldApart: pieces of tool calls at one index, as
// servers send them, read as the calls the model made. A name arriving
// after a call is named and whole starts the next call, unless it comes
// under that call's own id; a name while the arguments are not yet whole,
// or another id with no name (Poolside), is the same call.
func TestCallsAtOneIndexAreToldApart(t *testing.T) {
	piece := func(id, name, args string) string {
		tc := `{"index":0,"type":"function","function":{"arguments":` + args
		if name != "" {
			tc += `,"name":"` + name + `"`
		}
		tc += `}`
		if id != "" {
			tc += `,"id":"` + id + `"`
		}
		return `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[` + tc + `}]},"finish_reason":null}]}`
	}
	cases := []struct {
		name   string
		pieces []string
		want   []string // name and arguments (and the id where the server gave one)
	}{
		{"three calls, no ids", []string{
			piece("", "read_file", `"{\"path\":\"p0\"}"`),
			piece("", "write_file", `"{\"path\":\"p1\"}"`),
			piece("", "read_file", `"{\"path\":\"p2\"}"`),
		}, []string{`read_file {"path":"p0"}`, `write_file {"path":"p1"}`, `read_file {"path":"p2"}`}},
		{"the name again before the arguments are whole", []string{
			piece("", "grep", `"{\"pattern\":"`),
			piece("", "grep", `"\"TODO\"}"`),
		}, []string{`grep {"pattern":"TODO"}`}},
		{"the same function twice, whole each, no ids", []string{
			piece("", "read_file", `"{\"path\":\"a\"}"`),
			piece("", "read_file", `"{\"path\":\"b\"}"`),
		}, []string{`read_file {"path":"a"}`, `read_file {"path":"b"}`}},
		{"its own name again with no arguments after it is whole (names on every piece)", []string{
			piece("", "grep", `"{\"pattern\":"`),
			piece("", "grep", `"\"TODO\"}"`),
			piece("", "grep", `""`),
		}, []string{`grep {"pattern":"TODO"}`}},
		{"the call's own id and name again after it is whole", []string{
			piece("call_1", "grep", `"{\"pattern\":\"TODO\"}"`),
			piece("call_1", "grep", `""`),
		}, []string{`call_1 grep {"pattern":"TODO"}`}},
		{"another id without a name (Poolside)", []string{
			piece("call_1", "grep", `""`),
			piece("call_2", "", `"{\"pattern\":"`),
			piece("call_2", "", `"\"TODO\"}"`),
		}, []string{`call_1 grep {"pattern":"TODO"}`}},
		{"an id after a call with none", []string{
			piece("", "read_file", `"{\"path\":\"a\"}"`),
			piece("call_9", "read_file", `"{\"path\":\"b\"}"`),
		}, []string{`read_file {"path":"a"}`, `call_9 read_file {"path":"b"}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body strings.Builder
			body.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n")
			for _, p := range c.pieces {
				body.WriteString("data: " + p + "\n\n")
			}
			body.WriteString(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n")
			srv := modeltest.New()
			t.Cleanup(srv.Close)
			srv.Script(modeltest.Reply{Recorded: []byte(body.String())})
			resp, err := client(srv, model.APIChat).Stream(context.Background(), model.Request{Input: []model.Item{{Role: "user", Text: "hi"}}}, model.Handlers{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			ids := map[string]bool{}
			for _, call := range resp.Calls {
				s := call.Name + " " + call.Arguments
				if !strings.HasPrefix(call.CallID, "call_") || ids[call.CallID] {
					t.Errorf("call id %q", call.CallID)
				}
				ids[call.CallID] = true
				if strings.Contains(strings.Join(c.want, "\n"), call.CallID+" ") {
					s = call.CallID + " " + s
				}
				got = append(got, s)
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("calls\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}
