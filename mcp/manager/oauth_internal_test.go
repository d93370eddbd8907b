package manager

import (
	"context"
	"testing"

	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/oauth"
)

func TestSameOAuth(t *testing.T) {
	base := config.OAuth{ClientID: "app", CallbackHost: "127.0.0.1", CallbackPort: 8765, Scopes: []string{"a", "b"}}
	change := map[string]func(o *config.OAuth){
		"client id": func(o *config.OAuth) { o.ClientID = "other" },
		"host":      func(o *config.OAuth) { o.CallbackHost = "localhost" },
		"port":      func(o *config.OAuth) { o.CallbackPort = 8766 },
		"scopes":    func(o *config.OAuth) { o.Scopes = []string{"a"} },
		"no scopes": func(o *config.OAuth) { o.Scopes = nil },
		"empty":     func(o *config.OAuth) { o.Scopes = []string{} },
	}
	a := base
	if b := base; !sameOAuth(&a, &b) || !sameOAuth(nil, nil) || sameOAuth(&a, nil) || sameOAuth(nil, &a) {
		t.Fatal("equal blocks differ")
	}
	for what, f := range change {
		b := base
		b.Scopes = append([]string(nil), base.Scopes...)
		f(&b)
		if sameOAuth(&a, &b) {
			t.Errorf("a changed %s is the same server", what)
		}
		sa, sb := config.Server{Name: "x", Auth: "oauth", OAuth: &a}, config.Server{Name: "x", Auth: "oauth", OAuth: &b}
		if sameServer(sa, sb) {
			t.Errorf("sameServer ignores a changed %s", what)
		}
	}
}

// Attack: a hostile authorization server's metadata points its
// authorization_endpoint at file://localhost/Applications/Calculator.app
// or another scheme the system's opener hands to a program (go-sdk's
// metadata check passes any scheme but javascript, data and vbscript when
// the host is "localhost"). The sign-in link is never put to the person;
// the sign-in fails. (http to another machine and a user part are refused
// as for a server's own link.)
func TestSignInLinkOnlyAWebPage(t *testing.T) {
	h := &askHost{}
	m := New(Options{Host: h})
	for _, bad := range []string{
		"vscode://localhost/vscode.git/clone?url=https://evil.example/r.git&state=s",
		"file://localhost/etc/passwd?state=s",
		"file://localhost/Applications/Calculator.app?state=s",
		"ms-msdt://localhost/id?state=s",
		"http://evil.example/authorize?state=s",
		"https://login.example@evil.example/authorize?state=s",
	} {
		if err := (oauthHost{m}).OpenURL(context.Background(), oauth.SignIn{Server: "s", URL: bad}); err == nil {
			t.Errorf("%q: signed in", bad)
		}
	}
	if len(h.asked) != 0 {
		t.Fatalf("put to the person: %+v", h.asked)
	}
	if err := (oauthHost{m}).OpenURL(context.Background(), oauth.SignIn{Server: "s", URL: "https://login.example/authorize?state=s"}); err != nil || len(h.asked) != 1 {
		t.Errorf("a web sign-in page: %v, asked %d", err, len(h.asked))
	}
}
