package rpc_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/mcp/mcptest"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// Secrets typed in an editor's "add server" form for the project scope
// (header values, URL query values) never reach .kin/mcp.json, a file
// people commit: kin stores them in $KIN_HOME/mcp_secrets.json (0600),
// writes ${VAR} references, says so, and the server connects with them.
func TestMCPAddKeepsSecretsOutOfTheProjectFile(t *testing.T) {
	const token, key = "tok-form-canary-1234", "key-form-canary-5678"
	docs := mcptest.NewDocs()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return docs.Server }, nil)
	srv := mcptest.ServeHTTPHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token || r.URL.Query().Get("api_key") != key {
			http.Error(w, "who are you?", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	}))
	w := newWorld(t, map[string]any{})
	ed := w.editor()
	answer(ed, nil)
	ed.MustCall("mcp/add", map[string]any{"scope": "project", "name": "docs", "config": map[string]any{
		"type": "http", "url": srv.URL + "/mcp?api_key=" + key, "headers": map[string]any{"Authorization": "Bearer " + token, "X-Tenant": "acme"},
	}}, nil)
	note := ed.Wait("notice", func(n map[string]any) bool { return strings.Contains(n["message"].(string), "kept out of") })
	msg := note["message"].(string)
	for _, want := range []string{"headers.Authorization as ${DOCS_AUTHORIZATION}", "headers.X-Tenant as ${DOCS_X_TENANT}", "url query api_key as ${DOCS_URL_API_KEY}", "mcp_secrets.json"} {
		if !strings.Contains(msg, want) {
			t.Errorf("notice %q lacks %q", msg, want)
		}
	}
	project, err := os.ReadFile(filepath.Join(w.ws, ".kin", "mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	stored, err := os.ReadFile(filepath.Join(w.home, "mcp_secrets.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(w.home, "mcp_secrets.json")); fi.Mode().Perm() != 0o600 {
		t.Errorf("secrets file mode %v", fi.Mode().Perm())
	}
	for _, secret := range []string{token, key, "acme"} {
		if strings.Contains(string(project), secret) {
			t.Errorf("%q written into the project file:\n%s", secret, project)
		}
		if !strings.Contains(string(stored), secret) {
			t.Errorf("%q not stored", secret)
		}
	}
	if !strings.Contains(string(project), `"Authorization": "Bearer ${DOCS_AUTHORIZATION}"`) || !strings.Contains(string(project), "api_key=${DOCS_URL_API_KEY}") {
		t.Errorf("project file:\n%s", project)
	}

	ed.MustCall("mcp/apply", nil, nil)
	ed.Wait("mcp/status", rpctest.All(rpctest.Field("server", "docs"), rpctest.Field("state", "connected")))
	for _, n := range ed.Raw() {
		for _, secret := range []string{token, key} {
			if strings.Contains(string(n.Params), secret) {
				t.Errorf("%s carries a secret: %s", n.Method, n.Params)
			}
		}
	}
}
