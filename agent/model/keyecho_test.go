package model

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Attack: a service (or a proxy in front of it) quotes the key it was
// sent in its error: as the error body of a refused request, as the body
// of a 200 that is no stream, in an error event mid-answer, or in a failed
// response. The failure kin reports goes
// to the editor, the session log (the turn's error) and kin's log: the
// key must not be in it.
func TestAKeyTheServiceEchoesIsNotReported(t *testing.T) {
	const key = "sk-proj-Zq81mXo2TTn0aLw7vBcD"
	bodies := map[string]func(w http.ResponseWriter){
		"400": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":{"message":"Invalid key %s for this model","type":"invalid_request_error"}}`, key)
		},
		"html 502": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(502)
			fmt.Fprintf(w, "upstream refused Authorization: Bearer %s", key)
		},
		"error event": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"type\":\"error\",\"message\":\"bad key %s\"}\n\n", key)
		},
		"200 error body": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"error":"Unexpected key %s"}`, key)
		},
		"200 page": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "login required (sent %s)", key)
		},
		"failed": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"message\":\"key %s revoked\"}}}\n\n", key)
		},
	}
	for name, answer := range bodies {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { answer(w) }))
		cl := New(Config{APIKey: key, BaseURL: srv.URL, Model: "m"}, nil)
		_, err := cl.Stream(context.Background(), Request{Input: []Item{{Role: "user", Text: "hi"}}}, Handlers{})
		srv.Close()
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		if strings.Contains(err.Error(), key) || strings.Contains(err.Error(), key[8:]) {
			t.Errorf("%s: the key is in the failure: %v", name, err)
		}
	}
}
