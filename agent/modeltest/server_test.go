package modeltest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/kin-dev/kin/agent/modeltest"
)

func TestTextStream(t *testing.T) {
	srv, client := start(t)
	srv.Script(modeltest.Reply{Text: []string{"Hel", "lo", " world"}, Usage: modeltest.Usage{Input: 12, Output: 3}})

	r := collect(client.Responses.NewStreaming(ctxTimeout(t), userParams("hi there")))
	if r.err != nil {
		t.Fatal(r.err)
	}
	want := []string{
		"response.created", "response.in_progress",
		"response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.delta", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.completed",
	}
	if !slices.Equal(r.types, want) {
		t.Fatalf("events:\n got %v\nwant %v", r.types, want)
	}
	checkEvents(t, r.events)
	if r.text != "Hello world" {
		t.Errorf("text %q", r.text)
	}
	if done := r.events[7].AsResponseOutputTextDone(); done.Text != "Hello world" {
		t.Errorf("output_text.done text %q", done.Text)
	}
	c := r.completed
	if c.Status != "completed" || c.ID == "" || c.ID != r.events[0].Response.ID || c.Model != "gpt-test" {
		t.Errorf("completed response: status %q id %q model %q", c.Status, c.ID, c.Model)
	}
	if c.OutputText() != "Hello world" {
		t.Errorf("completed OutputText %q", c.OutputText())
	}
	if u := c.Usage; u.InputTokens != 12 || u.OutputTokens != 3 || u.TotalTokens != 15 || !u.JSON.InputTokensDetails.Valid() {
		t.Errorf("usage %s", u.RawJSON())
	}

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	q := reqs[0]
	if q.Model != "gpt-test" || !q.Stream || q.Authorization != "Bearer test" || q.Instructions != "be brief" {
		t.Errorf("request model %q stream %v auth %q instructions %q", q.Model, q.Stream, q.Authorization, q.Instructions)
	}
	if q.LastUserText() != "hi there" || len(q.Input) != 1 || q.Input[0]["role"] != "user" {
		t.Errorf("input %v", q.Input)
	}
	if len(q.Tools) != 1 || q.Tools[0]["name"] != "read_file" {
		t.Errorf("tools %v", q.Tools)
	}
}

func TestFunctionCalls(t *testing.T) {
	srv, client := start(t)
	srv.Script(modeltest.Reply{
		Text: []string{"Reading."},
		Calls: []modeltest.Call{
			{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`},
			{Name: "list_dir"},
		},
	})
	r := collect(client.Responses.NewStreaming(ctxTimeout(t), userParams("read a.go")))
	if r.err != nil {
		t.Fatal(r.err)
	}
	checkEvents(t, r.events)

	var added, done []responses.ResponseFunctionToolCall
	for _, ev := range r.events {
		switch ev.Type {
		case "response.output_item.added":
			if ev.Item.Type == "function_call" {
				added = append(added, ev.AsResponseOutputItemAdded().Item.AsFunctionCall())
			}
		case "response.output_item.done":
			if ev.Item.Type == "function_call" {
				done = append(done, ev.AsResponseOutputItemDone().Item.AsFunctionCall())
			}
		case "response.function_call_arguments.done":
			if ev.Arguments != r.args[ev.ItemID] {
				t.Errorf("arguments.done %q, deltas gave %q", ev.Arguments, r.args[ev.ItemID])
			}
		}
	}
	if len(added) != 2 || len(done) != 2 {
		t.Fatalf("added %d, done %d function calls", len(added), len(done))
	}
	if a := added[0]; a.CallID != "call_1" || a.Name != "read_file" || a.Status != "in_progress" || a.ID == "" || a.Arguments != "" {
		t.Errorf("added[0] %s", a.RawJSON())
	}
	if d := done[0]; d.Arguments != `{"path":"a.go"}` || r.args[d.ID] != d.Arguments || d.Status != "completed" {
		t.Errorf("done[0] %s, deltas %q", d.RawJSON(), r.args[d.ID])
	}
	if d := done[1]; d.Name != "list_dir" || !strings.HasPrefix(d.CallID, "call_") || d.Arguments != "{}" {
		t.Errorf("done[1] %s", d.RawJSON())
	}
	out := r.completed.Output
	if len(out) != 3 || out[0].Type != "message" || out[1].AsFunctionCall().CallID != "call_1" || out[2].AsFunctionCall().Name != "list_dir" {
		t.Errorf("completed response %s", r.completed.RawJSON())
	}
}

func TestHTTPErrors(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusTooManyRequests, http.StatusInternalServerError} {
		srv, client := start(t)
		srv.Script(modeltest.Reply{HTTPStatus: status, ErrorMessage: "scripted failure"})
		r := collect(client.Responses.NewStreaming(ctxTimeout(t), userParams("hi")))
		var apiErr *openai.Error
		if !errors.As(r.err, &apiErr) {
			t.Fatalf("%d: error %v (%T), want *openai.Error", status, r.err, r.err)
		}
		if apiErr.StatusCode != status || apiErr.Message != "scripted failure" || apiErr.Type == "" {
			t.Errorf("%d: got status %d message %q type %q", status, apiErr.StatusCode, apiErr.Message, apiErr.Type)
		}
		if len(r.events) != 0 {
			t.Errorf("%d: %d events", status, len(r.events))
		}
	}
}

func TestEmptyQueueIs500(t *testing.T) {
	_, client := start(t)
	r := collect(client.Responses.NewStreaming(ctxTimeout(t), userParams("hi")))
	var apiErr *openai.Error
	if !errors.As(r.err, &apiErr) || apiErr.StatusCode != 500 || apiErr.Message != "modeltest: no scripted reply" {
		t.Fatalf("error %v", r.err)
	}
}

func TestRetryAfterAndRetry(t *testing.T) {
	srv := modeltest.New()
	t.Cleanup(srv.Close)
	client := openai.NewClient(optionsWithRetries(srv, 1)...)
	srv.Script(modeltest.Reply{HTTPStatus: 429, RetryAfter: time.Millisecond}, modeltest.Reply{Text: []string{"ok"}})
	r := collect(client.Responses.NewStreaming(ctxTimeout(t), userParams("hi")))
	if r.err != nil || r.text != "ok" || len(srv.Requests()) != 2 {
		t.Fatalf("err %v text %q requests %d", r.err, r.text, len(srv.Requests()))
	}
}

func TestDropAfter(t *testing.T) {
	srv, client := start(t)
	srv.Script(modeltest.Reply{Text: []string{"a", "b", "c"}, DropAfter: 5})
	r := collect(client.Responses.NewStreaming(ctxTimeout(t), userParams("hi")))
	if r.err == nil {
		t.Fatal("no stream error after a dropped connection")
	}
	if len(r.events) != 5 || r.completed != nil {
		t.Errorf("got %d events %v", len(r.events), r.types)
	}
}

func TestNoCompleted(t *testing.T) {
	srv, client := start(t)
	srv.Script(modeltest.Reply{Text: []string{"partial"}, NoCompleted: true})
	r := collect(client.Responses.NewStreaming(ctxTimeout(t), userParams("hi")))
	if r.err != nil {
		t.Fatalf("stream error %v; want a clean end", r.err)
	}
	if r.completed != nil || r.types[len(r.types)-1] != "response.output_item.done" || r.text != "partial" {
		t.Errorf("events %v text %q", r.types, r.text)
	}
}

func TestFailed(t *testing.T) {
	srv, client := start(t)
	srv.Script(modeltest.Reply{Text: []string{"x"}, Failed: "model exploded"})
	r := collect(client.Responses.NewStreaming(ctxTimeout(t), userParams("hi")))
	if r.err != nil {
		t.Fatal(r.err)
	}
	checkEvents(t, r.events)
	if r.completed != nil || r.failed == nil {
		t.Fatalf("events %v", r.types)
	}
	if r.failed.Status != "failed" || r.failed.Error.Message != "model exploded" || r.failed.Error.Code != "server_error" {
		t.Errorf("failed response status %q error %s", r.failed.Status, r.failed.Error.RawJSON())
	}
}

func TestHold(t *testing.T) {
	srv, client := start(t)
	release := make(chan struct{})
	srv.Script(modeltest.Reply{Text: []string{"first", " second"}, Hold: release})

	stream := client.Responses.NewStreaming(ctxTimeout(t), userParams("hi"))
	defer stream.Close()
	events := make(chan string)
	go func() {
		defer close(events)
		for stream.Next() {
			events <- stream.Current().Type
		}
	}()
	for typ := range events {
		if typ == "response.output_text.delta" {
			break
		}
	}
	select {
	case typ := <-events:
		t.Fatalf("event %q arrived while held", typ)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	var last string
	for typ := range events {
		last = typ
	}
	if last != "response.completed" || stream.Err() != nil {
		t.Fatalf("after release: last event %q, err %v", last, stream.Err())
	}
}

// A held or slow stream must end when the client goes away, so the test
// server can shut down.
func TestHoldAndDelayEndOnDisconnect(t *testing.T) {
	srv, client := start(t)
	srv.Script(
		modeltest.Reply{Text: []string{"x"}, Hold: make(chan struct{})},
		modeltest.Reply{Text: []string{"x"}, Delay: time.Hour},
	)
	for range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		stream := client.Responses.NewStreaming(ctx, userParams("hi"))
		if !stream.Next() {
			t.Fatal(stream.Err())
		}
		cancel()
		stream.Close()
	}
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close blocked on abandoned streams")
	}
}

func TestNonStreaming(t *testing.T) {
	srv, client := start(t)
	srv.Script(modeltest.Reply{Text: []string{"plain ", "answer"}, Calls: []modeltest.Call{{Name: "f", Arguments: "{}"}}})
	resp, err := client.Responses.New(ctxTimeout(t), userParams("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.OutputText() != "plain answer" || len(resp.Output) != 2 || resp.Status != "completed" || resp.Usage.TotalTokens == 0 {
		t.Errorf("response %s", resp.RawJSON())
	}
	if srv.Requests()[0].Stream {
		t.Error("request recorded as streaming")
	}
}

func TestWaitRequests(t *testing.T) {
	srv, client := start(t)
	srv.Script(modeltest.Reply{Text: []string{"a"}})
	go func() {
		time.Sleep(20 * time.Millisecond)
		collect(client.Responses.NewStreaming(context.Background(), userParams("hi")))
	}()
	if got := srv.WaitRequests(1, 5*time.Second); len(got) != 1 {
		t.Fatalf("WaitRequests(1) = %d requests", len(got))
	}
	if got := srv.WaitRequests(2, 30*time.Millisecond); len(got) != 1 {
		t.Fatalf("WaitRequests(2) after timeout = %d requests", len(got))
	}
}

func TestMissingModelIs400(t *testing.T) {
	srv, client := start(t)
	srv.Script(modeltest.Reply{Text: []string{"unused"}})
	p := userParams("hi")
	p.Model = ""
	r := collect(client.Responses.NewStreaming(ctxTimeout(t), p))
	var apiErr *openai.Error
	if !errors.As(r.err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "model" {
		t.Fatalf("error %v", r.err)
	}
	// The scripted reply is still queued for the next valid request.
	if r := collect(client.Responses.NewStreaming(ctxTimeout(t), userParams("hi"))); r.text != "unused" {
		t.Fatalf("text %q err %v", r.text, r.err)
	}
}

// The model list answers, as an OpenAI-compatible service's does (a
// health check reads a 404 there as a wrong address).
func TestModelsList(t *testing.T) {
	srv := modeltest.New()
	defer srv.Close()
	res, err := http.Get(srv.URL() + "/models")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil || res.StatusCode != 200 || list.Object != "list" || len(list.Data) == 0 {
		t.Errorf("GET /v1/models: %d %+v %v", res.StatusCode, list, err)
	}
}

// A route is a conversation's own script, whatever order its requests
// come in among others'; one that ran out answers 500.
func TestRouteByFirstUserMessage(t *testing.T) {
	srv, client := start(t)
	srv.Route(modeltest.FirstUser("child"), modeltest.Reply{Text: []string{"child 1"}}, modeltest.Reply{Text: []string{"child 2"}})
	srv.Script(modeltest.Reply{Text: []string{"main"}})
	if r := collect(client.Responses.NewStreaming(ctxTimeout(t), userParams("the child task"))); r.text != "child 1" {
		t.Errorf("first child request: %q %v", r.text, r.err)
	}
	if r := collect(client.Responses.NewStreaming(ctxTimeout(t), userParams("the parent"))); r.text != "main" {
		t.Errorf("another conversation: %q %v", r.text, r.err)
	}
	// The child's conversation goes on: its first user message decides.
	if r := collect(client.Responses.NewStreaming(ctxTimeout(t), toolOutputParams("the child task", "call_1", "x"))); r.text != "child 2" {
		t.Errorf("second child request: %q %v", r.text, r.err)
	}
	var apiErr *openai.Error
	if r := collect(client.Responses.NewStreaming(ctxTimeout(t), userParams("child again"))); !errors.As(r.err, &apiErr) || apiErr.StatusCode != 500 {
		t.Errorf("a route that ran out: %v", r.err)
	}
}
