package manager

import (
	"testing"

	"github.com/kin-dev/kin/mcp/config"
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
