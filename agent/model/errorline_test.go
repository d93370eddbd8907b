package model

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAnErrorLineBeforeAnythingIsTheRefusalItSays: llama-server's "error:"
// line with a 4xx code, before anything streamed, is the refusal of the
// request as a whole (an overflow says so, and compacts); after the answer
// began, or with a 5xx code, it stays an error mid-answer (the request ran).
func TestAnErrorLineBeforeAnythingIsTheRefusalItSays(t *testing.T) {
	line := `error: {"code":%d,"message":"request (9012 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error"}`
	cases := []struct {
		name     string
		body     string
		overflow bool
	}{
		{"400 first", fmt.Sprintf(line, 400) + "\n\ndata: [DONE]\n\n", true},
		{"400 after text", `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}` +
			"\n\n" + fmt.Sprintf(line, 400) + "\n\ndata: [DONE]\n\n", false},
		{"500 first", fmt.Sprintf(line, 500) + "\n\ndata: [DONE]\n\n", false},
	}
	for _, c := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, c.body)
		}))
		cl := New(Config{APIKey: "sk-test", BaseURL: srv.URL, Model: "m", API: APIChat}, nil)
		_, err := cl.Stream(context.Background(), Request{Input: []Item{{Role: "user", Text: "hi"}}}, Handlers{})
		srv.Close()
		var ref *Refusal
		if IsOverflow(err) != c.overflow || errors.As(err, &ref) != c.overflow {
			t.Errorf("%s: %v", c.name, err)
		}
		if !c.overflow && (err == nil || !strings.Contains(err.Error(), "reported an error mid-answer: request (9012 tokens) exceeds")) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
