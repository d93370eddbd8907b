package boundary

import (
	"path"
	"testing"
)

// The secret-name lists are matched without path.Match (glob.match): on
// every name and pattern the answer must be path.Match's.
func TestGlobsMatchAsPathMatch(t *testing.T) {
	names := []string{"", ".env", ".env.local", ".env.example", "env", ".envrc", "a.pem", ".pem", "pem", "x.key.bak",
		"id_rsa", "id_rsa.pub", "id_rsa_old", "xid_rsa", "credentials", "credentials.json", "my.credentials",
		"kubeconfig", "kubeconfig.yaml", "secrets.yml", "readme.md", "a.jks", "key", "id_ed25519-sk", ".npmrc", "npmrc"}
	for _, list := range [][]string{secretNames, notSecret} {
		for _, g := range globsOf(list) {
			for _, n := range names {
				want, _ := path.Match(g.pattern, n)
				if got := g.match(n); got != want {
					t.Errorf("%q against %q: %v, path.Match says %v", n, g.pattern, got, want)
				}
			}
		}
	}
}

// A pattern of another form is refused at start, not matched wrongly.
func TestGlobsRefuseOtherForms(t *testing.T) {
	for _, p := range []string{"a*b", "*a*", "a?", "[ab]"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%q was taken", p)
				}
			}()
			globsOf([]string{p})
		}()
	}
}
