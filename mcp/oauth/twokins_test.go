package oauth_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/mcp/oauth"
	"github.com/kin-dev/kin/mcp/oauth/oauthtest"
)

// TestASignInUnderWayInAnotherKinIsWaitedFor: the person runs mcp/login in
// one editor window and is in the browser on the provider's page; another
// kin on the same KIN_HOME (the other window) finds the stored sign-in gone
// at its next renewal and got a 401. It asked the person to sign in too: a
// second prompt in the other window for the sign-in they are doing, with a
// second callback server and, when they answered the wrong one, a failure.
// The other kin must wait for the sign-in under way and take its token.
func TestASignInUnderWayInAnotherKinIsWaitedFor(t *testing.T) {
	w := newWorld(t, oauthtest.AuthOptions{AccessTTL: 5 * time.Second}, oauthtest.ResourceOptions{})
	s := w.server("api", nil, nil)
	ha := newHost(t)
	a := w.manager(ha)
	whoami(t, mustConnect(t, a, s))
	hb := newHost(t)
	b := mustConnect(t, w.manager(hb), s)
	whoami(t, b)

	// The person takes their time in the browser for A's mcp/login.
	shown := make(chan oauth.SignIn, 1)
	finish := make(chan struct{})
	ha.open = func(ctx context.Context, req oauth.SignIn) error {
		shown <- req
		select {
		case <-finish:
		case <-ctx.Done():
			return ctx.Err()
		}
		return ha.visit(ctx, req.URL)
	}
	login := make(chan error, 1)
	go func() { login <- a.Login(context.Background(), s) }()
	<-shown

	called := make(chan string, 1)
	go func() { called <- whoami(t, b) }()
	w.waitForWaiting(t) // B met the removed sign-in, and waits for A's
	close(finish)
	if err := <-login; err != nil {
		t.Fatalf("login: %v", err)
	}
	select {
	case <-called:
	case <-time.After(30 * time.Second):
		t.Fatal("the other kin's call never finished")
	}
	if n := len(hb.SignIns()); n != 0 {
		t.Errorf("the other kin asked the person to sign in %d times while a sign-in was under way", n)
	}
	if c := w.as.Counts(); c.Authorizes != 2 {
		t.Errorf("counts = %+v: want the first sign-in and the mcp/login one", c)
	}
}

// TestADeclinedSignInInAnotherKinIsNotAskedAgain: the person declines the
// mcp/login sign-in of one window; the other kin, which waited for it,
// fails its call instead of showing the prompt they just declined.
func TestADeclinedSignInInAnotherKinIsNotAskedAgain(t *testing.T) {
	w := newWorld(t, oauthtest.AuthOptions{AccessTTL: 5 * time.Second}, oauthtest.ResourceOptions{})
	s := w.server("api", nil, nil)
	ha := newHost(t)
	a := w.manager(ha)
	whoami(t, mustConnect(t, a, s))
	b := mustConnect(t, w.manager(refuseHost{t}), s)
	whoami(t, b)

	shown := make(chan struct{}, 1)
	decline := make(chan struct{})
	ha.open = func(ctx context.Context, _ oauth.SignIn) error {
		shown <- struct{}{}
		<-decline
		return errors.New("the person declines")
	}
	login := make(chan error, 1)
	go func() { login <- a.Login(context.Background(), s) }()
	<-shown
	called := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
		if err == nil && res.IsError {
			err = errors.New("tool error")
		}
		called <- err
	}()
	w.waitForWaiting(t) // B waits for A's sign-in
	close(decline)
	if err := <-login; err == nil {
		t.Fatal("the declined login succeeded")
	}
	if err := <-called; err == nil {
		t.Error("the other kin's call succeeded without a sign-in")
	}
}

// waitForWaiting waits until a kin logged that it waits for another's
// sign-in (a guard against a hang: a loaded machine is slow).
func (w *world) waitForWaiting(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); w.logs.FilterMessage(oauth.WaitingLog).Len() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no kin began to wait for the sign-in under way")
		}
	}
}
