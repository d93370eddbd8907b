package sendonce_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/sendonce"
	"github.com/kin-dev/kin/agent/sendonce/resettest"
)

// A POST whose stream the peer resets once it took the whole request is
// sent once and fails with ErrMayHaveArrived; without Transport, Go's
// HTTP/2 transport sends it again and again.
func TestARequestThatWentOutWholeIsSentOnce(t *testing.T) {
	s := resettest.New(t)
	post := func(rt http.RoundTripper) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/x", strings.NewReader(`{"a":1}`))
		resp, err := (&http.Client{Transport: rt}).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := post(resettest.Transport()); err == nil || s.Arrived() < 2 {
		t.Fatalf("the bare transport: %v, %d requests arrived: the peer does not make it resend", err, s.Arrived())
	}
	s.Reset()
	err := post(sendonce.Transport(resettest.Transport()))
	if !errors.Is(err, sendonce.ErrMayHaveArrived) || s.Arrived() != 1 {
		t.Errorf("%v, %d requests arrived", err, s.Arrived())
	}
}
