package manager_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/mcp/manager"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// A server answers the read of an attached resource, then never answers
// resources/subscribe (which kin sends only to say later that the
// attachment went stale). The question waited for it for the server's
// whole configured timeout, whatever its own bound on the read (turn/start
// waits 30 s at most for a resource): here 15 s, ten minutes for a server
// configured for long calls.
func TestASubscriptionThatIsNeverAnsweredDoesNotHoldTheQuestion(t *testing.T) {
	release := make(chan struct{})
	s := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler: func(ctx context.Context, _ *mcp.SubscribeRequest) error {
			select {
			case <-ctx.Done():
			case <-release:
			}
			return nil
		},
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	s.AddResource(&mcp.Resource{URI: "slow://a", Name: "a"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "slow://a", Text: "here"}}}, nil
	})
	home := t.TempDir()
	writeConfig(t, home, map[string]any{"slow": map[string]any{"type": "http", "url": mcptest.ServeHTTP(t, s), "timeout": 15000}})
	m := manager.New(manager.Options{Workdir: t.TempDir(), KinHome: home, Host: &resHost{}, Env: env(nil)})
	t.Cleanup(m.Close)
	// Cleanups run last first: the handler lets go before anything closes.
	t.Cleanup(func() { close(release) })
	m.Start(context.Background())
	if r := state(m, "slow"); r.State != manager.StateConnected {
		t.Fatalf("slow: %+v", r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	text, _, err := m.ReadForPerson(ctx, "slow", "slow://a")
	if err != nil || text == "" {
		t.Fatalf("%q %v", text, err)
	}
	// Held by the subscription, the question would wait the server's
	// 15 s timeout; the slack over SubscribeWait is for a loaded machine.
	if d := time.Since(start); d > manager.SubscribeWait+8*time.Second {
		t.Fatalf("the question waited %s for a subscription", d.Round(time.Millisecond))
	}
}
