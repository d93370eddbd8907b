package builtin_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/tool"
)

// keyBelowOtherLines is a private key in a file not named like a secret,
// below other lines: what `openssl pkcs12 -nodes` writes (its "Bag
// Attributes" first), after a server's certificates (a combined PEM, 9 KiB
// of them: past the first 8 KiB kin looked at).
var keyBelowOtherLines = map[string]string{
	"exported.txt": "Bag Attributes\n    localKeyID: 01 02 03\nKey Attributes: <No Attributes>\n-----BEGIN PRIVATE KEY-----\nMIIEvQ-canary-1\n-----END PRIVATE KEY-----\n",
	"haproxy-site.txt": strings.Repeat("-----BEGIN CERTIFICATE-----\n"+strings.Repeat("MIID", 750)+"\n-----END CERTIFICATE-----\n", 3) +
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEpA-canary-2\n-----END RSA PRIVATE KEY-----\n",
}

// read_file asks before it reads either, as it does a key at the top of a
// file; search leaves them out; attach refuses them.
func TestAPrivateKeyBelowOtherLinesIsASecret(t *testing.T) {
	root, env := workspace(t)
	files(t, root, keyBelowOtherLines)
	for name := range keyBelowOtherLines {
		a := mustPrepareAsked(t, "read_file", env, map[string]any{"path": name})
		if a == "" || !strings.Contains(a, "private key") {
			t.Errorf("read_file %s: approval %q, want one about a private key", name, a)
		}
		if _, _, err := builtin.ReadAttachment(context.Background(), env, name, 1<<20); err == nil || !strings.Contains(err.Error(), "private key") {
			t.Errorf("attach %s: %v", name, err)
		}
	}
	// a page that begins at the key's marker (line 4)
	a := mustPrepareAsked(t, "read_file", env, map[string]any{"path": "exported.txt", "offset": 4})
	if !strings.Contains(a, "private key") {
		t.Errorf("a page that begins at the key's marker: approval %q", a)
	}
	r := call(t, "search", env, map[string]any{"pattern": "canary"})
	wantNotContains(t, r.Output, "canary-1", "canary-2")
}

// mustPrepareAsked prepares a call and says what its approval warns of
// ("" when it runs unasked).
func mustPrepareAsked(t *testing.T, name string, env tool.Env, args map[string]any) string {
	t.Helper()
	a, err := prepare(t, name, env, args)
	if err != nil {
		t.Fatal(err)
	}
	if a.Approval == nil {
		return ""
	}
	return a.Approval.Warning
}
