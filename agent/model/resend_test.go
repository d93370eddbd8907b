package model

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/sendonce/resettest"
)

// Attack: the request reaches the service whole, then its HTTP/2 stream is
// reset with PROTOCOL_ERROR. Go's HTTP/2 transport sends such a request
// again, over and over, whenever it can rewind the body (16,643 times in
// 3 s before the fix); kin sends a model request once.
func TestARequestThatArrivedIsNotSentAgainOverHTTP2(t *testing.T) {
	s := resettest.New(t)
	hc := &http.Client{Transport: resettest.Transport()}
	for _, api := range []string{APIResponses, APIChat} {
		s.Reset()
		cl := New(Config{APIKey: "sk-test", BaseURL: s.URL() + "/v1/", Model: "m", API: api}, hc)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_, err := cl.Stream(ctx, Request{Input: []Item{{Role: "user", Text: "hi"}}}, Handlers{})
		cancel()
		if err == nil {
			t.Fatalf("%s: no error", api)
		}
		if n := s.Arrived(); n != 1 {
			t.Errorf("%s: the request arrived %d times (%v)", api, n, err)
		}
		if !strings.Contains(err.Error(), "may have it") || strings.Contains(err.Error(), "could not reach") {
			t.Errorf("%s: %v", api, err)
		}
	}
}
