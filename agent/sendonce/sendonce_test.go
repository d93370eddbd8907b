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
	post := func(s *resettest.Server, rt http.RoundTripper) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/x", strings.NewReader(`{"a":1}`))
		resp, err := (&http.Client{Transport: rt}).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	// each transport has its own peer: the bare transport's last resend
	// may still be on its way when its request gives up, and arrive
	// while sendonce's request is counted (CI counted 2)
	bare := resettest.New(t)
	if err := post(bare, resettest.Transport()); err == nil || bare.Arrived() < 2 {
		t.Fatalf("the bare transport: %v, %d requests arrived: the peer does not make it resend", err, bare.Arrived())
	}
	s := resettest.New(t)
	err := post(s, sendonce.Transport(resettest.Transport()))
	if !errors.Is(err, sendonce.ErrMayHaveArrived) || s.Arrived() != 1 {
		t.Errorf("%v, %d requests arrived", err, s.Arrived())
	}
}
