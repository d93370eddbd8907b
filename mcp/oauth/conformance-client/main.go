// Command conformance-client is the client the MCP conformance suite
// (@modelcontextprotocol/conformance, "client --suite auth") runs to test
// kin's OAuth sign-in: package mcp/oauth wired into a go-sdk streamable
// HTTP client the way kin's connect does it.
//
// The suite starts a scenario's authorization and MCP servers, then runs
// this command with the MCP endpoint as its only argument, the scenario's
// name in MCP_CONFORMANCE_SCENARIO and, for some scenarios, a JSON object in
// MCP_CONFORMANCE_CONTEXT (client_id and client_secret for pre-registration).
// The command connects, lists the tools and calls "test-tool" when offered;
// it exits non-zero when any step fails.
//
// The person at the browser is played by oauthtest.Browser: it fetches the
// sign-in URL and follows the redirect to kin's loopback callback. Sign-in
// state lives in a temporary KIN_HOME removed at exit.
//
// Run it through run.sh beside this file.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/oauth"
	"github.com/kin-dev/kin/mcp/oauth/oauthtest"
)

// host lets the test browser visit each sign-in URL.
type host struct{ browser *oauthtest.Browser }

func (h host) OpenURL(ctx context.Context, req oauth.SignIn) error {
	log.Printf("sign-in for %s (redirect %s)", req.Server, req.RedirectURI)
	// The browser is not stopped by kin: it finishes loading the callback.
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	return h.browser.Visit(bctx, req.URL)
}

func (h host) Notice(server, message string) { log.Printf("notice from %s: %s", server, message) }

func main() {
	log.SetFlags(0)
	log.SetPrefix("kin-conformance-client: ")
	if len(os.Args) != 2 {
		log.Fatalf("usage: %s <server-url>", os.Args[0])
	}
	if err := run(os.Args[1], os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Getenv("MCP_CONFORMANCE_CONTEXT")); err != nil {
		log.Fatalf("scenario %q failed: %v", os.Getenv("MCP_CONFORMANCE_SCENARIO"), err)
	}
}

func run(serverURL, scenario, rawContext string) error {
	var scenarioCtx struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if rawContext != "" {
		if err := json.Unmarshal([]byte(rawContext), &scenarioCtx); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %v", err)
		}
	}
	home, err := os.MkdirTemp("", "kin-conformance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)

	srv := config.Server{
		Name: "conformance", Scope: config.ScopeGlobal, Transport: config.TransportHTTP,
		URL: serverURL, Auth: "oauth", OAuth: &config.OAuth{CallbackHost: "127.0.0.1", ClientID: scenarioCtx.ClientID},
	}
	logger, _ := zap.NewDevelopment(zap.AddStacktrace(zapcore.ErrorLevel))
	defer logger.Sync()
	m := oauth.New(oauth.Options{
		KinHome: home,
		Host:    host{&oauthtest.Browser{}},
		Logger:  logger,
		ClientSecret: func(config.Server) string {
			return scenarioCtx.ClientSecret
		},
		// The suite's stand-in for a published client metadata document.
		ClientMetadataURL: "https://conformance-test.local/client-metadata.json",
	})
	handler, err := m.Handler(srv)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "kin", Version: "conformance"}, nil)
	transport := &mcp.StreamableClientTransport{
		Endpoint: serverURL,
		HTTPClient: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		OAuthHandler: handler,
		MaxRetries:   -1,
	}
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer session.Close()
	log.Printf("connected (%s)", scenario)

	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	if slices.ContainsFunc(tools.Tools, func(t *mcp.Tool) bool { return t.Name == "test-tool" }) {
		if _, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "test-tool", Arguments: map[string]any{}}); err != nil {
			return fmt.Errorf("tools/call test-tool: %w", err)
		}
	}
	st := m.Status(srv)
	log.Printf("done: signed in %v, renewable %v", st.SignedIn, st.Renewable)
	return nil
}
