package model_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/modeltest"
)

// stream sends one question to srv through kin's model client.
func stream(t *testing.T, srv *modeltest.Server, idle time.Duration, onDelta func(string)) (*model.Response, error) {
	t.Helper()
	c := model.New(model.Config{APIKey: "sk-test", BaseURL: srv.URL(), Model: "mock-1", IdleTimeout: idle}, nil)
	return c.Stream(context.Background(), model.Request{Input: []model.Item{{Role: "user", Text: "hi"}}}, model.Handlers{Text: onDelta})
}

// TestFailuresSayWhatHappened pins the sentence a person reads for each way
// a model request can fail, and that none of them is retried.
func TestFailuresSayWhatHappened(t *testing.T) {
	html := `<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>`
	cases := []struct {
		name  string
		reply modeltest.Reply
		want  []string
		not   []string
	}{
		{"malformed SSE JSON", modeltest.Reply{Text: []string{"a", "b"}, BadJSON: true},
			[]string{"sent an event that is not valid JSON", "nothing was retried"}, []string{"connection"}},
		{"over-long SSE line", modeltest.Reply{Text: []string{"a", "b"}, LongLine: 33 << 20},
			[]string{"event line longer than 32 MiB", "nothing was retried"}, []string{"connection"}},
		{"429 with Retry-After", modeltest.Reply{HTTPStatus: 429, RetryAfter: 20 * time.Second},
			[]string{"HTTP 429", "wait 20 s and try again", "Rate limit reached"}, nil},
		{"429 without Retry-After", modeltest.Reply{HTTPStatus: 429},
			[]string{"HTTP 429", "wait a little and try again"}, nil},
		{"503 with Retry-After", modeltest.Reply{HTTPStatus: 503, RetryAfter: 90 * time.Second},
			[]string{"HTTP 503", "wait 1m30s and try again", "overloaded"}, nil},
		{"502 HTML page", modeltest.Reply{HTTPStatus: 502, ErrorBody: html, ErrorContentType: "text/html"},
			[]string{"HTTP 502 Bad Gateway", `HTML page titled "502 Bad Gateway"`, "proxy or gateway"}, []string{"()", "<"}},
		{"502 empty body", modeltest.Reply{HTTPStatus: 502, ErrorBody: " "},
			[]string{"HTTP 502", "empty body"}, []string{"()"}},
		{"500 plain text", modeltest.Reply{HTTPStatus: 500, ErrorBody: "upstream\a timed\u202e out\n"},
			[]string{"HTTP 500", `"upstream timed out"`}, []string{"\a", "\u202e"}},
		// A base URL that names a web UI, not its API: the page answers 200.
		{"200 web page", modeltest.Reply{Recorded: []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" +
			"<!doctype html><html><head><title>Open WebUI</title></head><body><div id=\"app\"></div></body></html>\n")},
			[]string{`(HTTP 200) with an HTML page titled "Open WebUI", not an event stream`, "OPENAI_BASE_URL"}, []string{"<", "without finishing"}},
		{"dropped mid-answer", modeltest.Reply{Text: []string{"a", "b", "c"}, DropAfter: 4},
			[]string{"connection to the model service broke mid-answer", "nothing was retried"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := modeltest.New()
			t.Cleanup(srv.Close)
			srv.Script(c.reply)
			_, err := stream(t, srv, 0, nil)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(err.Error(), n) {
					t.Errorf("error %q has %q", err, n)
				}
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests: a failed request must not be retried", n)
			}
		})
	}
}

func TestUnreachableServiceIsNotCalledMidAnswer(t *testing.T) {
	srv := modeltest.New()
	url := srv.URL() + "?api-key=sk-in-url"
	srv.Close()
	c := model.New(model.Config{APIKey: "sk-test", BaseURL: url, Model: "mock-1"}, nil)
	_, err := c.Stream(context.Background(), model.Request{Input: []model.Item{{Role: "user", Text: "hi"}}}, model.Handlers{})
	if err == nil || !strings.Contains(err.Error(), "could not reach the model service") || strings.Contains(err.Error(), "mid-answer") {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(err.Error(), "sk-in-url") {
		t.Errorf("the base URL (and its key) reached the message: %v", err)
	}
}

// TestIdleTimeoutCountsOnlyWaitingOnTheService: kin busy with a delta (an
// editor slow to take it) for longer than the idle timeout is not a silent
// service; the answer completes.
func TestIdleTimeoutCountsOnlyWaitingOnTheService(t *testing.T) {
	srv := modeltest.New()
	t.Cleanup(srv.Close)
	srv.Script(modeltest.Reply{Text: []string{"slow ", "consumer"}})
	idle := 200 * time.Millisecond
	first := true
	resp, err := stream(t, srv, idle, func(string) {
		if first {
			first = false
			time.Sleep(3 * idle) // kin, not the service, is slow here
		}
	})
	if err != nil || resp.Text != "slow consumer" {
		t.Fatalf("err %v text %q", err, resp.Text)
	}
}

func TestIdleTimeoutPhases(t *testing.T) {
	cases := []struct {
		stall modeltest.Stall
		phase string
		want  string
	}{
		{modeltest.StallBeforeHeaders, "connecting", "did not answer within 1 s"},
		{modeltest.StallAfterHeaders, "headers", "accepted the request but then sent nothing for 1 s"},
		{modeltest.StallMidStream, "streaming", "sent nothing for 1 s mid-answer"},
	}
	for _, c := range cases {
		t.Run(c.phase, func(t *testing.T) {
			t.Parallel()
			srv := modeltest.New()
			t.Cleanup(srv.Close)
			srv.Script(modeltest.Reply{Text: []string{"a", "b"}, Stall: c.stall})
			_, err := stream(t, srv, time.Second, nil)
			var idle *model.IdleError
			if !errors.As(err, &idle) || idle.Phase != c.phase || !strings.Contains(err.Error(), c.want) ||
				!strings.Contains(err.Error(), "modelIdleTimeoutSeconds") {
				t.Fatalf("error %v, want an idle timeout while %s", err, c.phase)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests: a timed-out request must not be retried", n)
			}
		})
	}
}
