package rpc_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/mcp/oauth/oauthtest"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// A server that echoes the OAuth access token it was sent, in a tool result
// or in an error, has it masked like its env and header secrets: the token
// never reaches the model request, the session log or the editor.
func TestMCPEchoedOAuthTokenIsRedacted(t *testing.T) {
	as := oauthtest.NewAuthServer(t, oauthtest.AuthOptions{})
	rs := oauthtest.NewResourceServer(t, as, oauthtest.ResourceOptions{})
	w := newWorld(t, map[string]any{"api": map[string]any{"type": "http", "url": rs.URL, "auth": "oauth"}})
	ed := w.editor()
	signInEditor(t, ed, &oauthtest.Browser{})
	respond(ed, ed.Wait("approval/request", rpctest.Field("kind", "server_launch")), "trust")
	ed.Wait("mcp/status", rpctest.All(rpctest.Field("server", "api"), rpctest.Field("state", "connected")))

	w.model.Script(
		modeltest.Reply{Calls: []modeltest.Call{
			{ID: "e1", Name: "mcp__api__echo_token", Arguments: "{}"},
			{ID: "e2", Name: "mcp__api__echo_token_error", Arguments: "{}"},
		}},
		modeltest.Reply{Text: []string{"ok"}},
	)
	sid := newSession(t, ed)
	tid := start(t, ed, sid, "what did you send?")
	if done := ed.Wait("turn/completed", rpctest.Field("turnId", tid)); done["status"] != "completed" {
		t.Fatalf("turn %v", done)
	}
	ok := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "e1"), rpctest.Field("status", "completed")))
	failed := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "e2"), rpctest.Field("status", "failed")))
	if !strings.Contains(fmt.Sprint(ok["output"]), "you sent Bearer ●●●●") || !strings.Contains(fmt.Sprint(failed["output"]), "rejected Bearer ●●●●") {
		t.Fatalf("outputs %v / %v", ok["output"], failed["output"])
	}

	var model strings.Builder
	for _, r := range w.model.Requests() {
		model.Write(r.Raw)
	}
	var notes strings.Builder
	for _, n := range ed.Raw() {
		notes.WriteString(n.Method + " " + string(n.Params) + "\n")
	}
	session, err := os.ReadFile(filepath.Join(w.home, "sessions", sid+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	secrets := as.Secrets()
	if len(secrets) == 0 {
		t.Fatal("no credentials issued")
	}
	for _, secret := range secrets {
		for where, text := range map[string]string{"model request": model.String(), "editor": notes.String(), "session log": string(session)} {
			if strings.Contains(text, secret) {
				t.Errorf("credential %.8s… reached the %s", secret, where)
			}
		}
	}
}
