package oauth_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/mcp/oauth/oauthtest"
)

// TestAForgottenRegistrationIsMadeAgain: a provider that keeps dynamic
// registrations in memory forgets kin's client when it restarts. kin kept
// the stored registration for good: the renewal was refused
// (invalid_client), and every sign-in after it sent the person to the
// provider with a client id it no longer knows, an error page the
// browser never comes back from, so the server could not be signed in to
// again (mcp/login keeps the registration too) short of deleting files in
// KIN_HOME/mcp_auth. kin must register again: at once when the renewal
// says invalid_client, and at the sign-in after one that failed with the
// stored registration.
func TestAForgottenRegistrationIsMadeAgain(t *testing.T) {
	for name, ao := range map[string]oauthtest.AuthOptions{
		"rejected token": {},                           // 401, forced renewal refused
		"expired token":  {AccessTTL: 5 * time.Second}, // renewal before the request refused
		"no refresh":     {NoRefreshToken: true},       // the sign-in fails, mcp/login works
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, ao, oauthtest.ResourceOptions{})
			s := w.server("api", nil, nil)
			m := w.manager(newHost(t))
			cs := mustConnect(t, m, s)
			whoami(t, cs)

			w.as.Restart()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
			if ao.NoRefreshToken {
				if err == nil {
					t.Fatal("a sign-in with a client the provider forgot worked")
				}
				// What a person does: sign in again.
				if err := m.Login(ctx, s); err != nil {
					t.Fatalf("mcp/login: %v", err)
				}
				cs = mustConnect(t, m, s)
			} else if err != nil {
				t.Fatalf("whoami after the provider forgot the client: %v", err)
			}
			whoami(t, cs)
			if c := w.as.Counts(); c.Registrations != 2 {
				t.Errorf("counts %+v: want a second registration", c)
			}
		})
	}
}
