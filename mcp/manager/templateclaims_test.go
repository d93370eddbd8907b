package manager

import "testing"

// A server's template claims the links of its own scheme, and the web's or
// files' only below a whole host or a folder it fixes: "file:///{path}"
// claimed every file link a person attached (README says a bare file
// scheme claims nothing), and "https://g{x}" every link to a host
// beginning with g.
func TestATemplateClaimsOnlyWhatItFixes(t *testing.T) {
	for _, tc := range []struct {
		template, uri string
		want          bool
	}{
		{"notes://{project}/{note}", "notes://kin/design", true},
		{"notes://{id}", "other://x", false},
		{"file:///{path}", "file:///home/ana/.ssh/config", false},
		{"file:///{+path}", "file:///etc/passwd", false},
		{"file:///srv/docs/{name}", "file:///srv/docs/a.md", true},
		{"file:///srv/docs/{name}", "file:///etc/passwd", false},
		{"https://{host}/{path}", "https://example.com/a", false},
		{"https://g{x}/y", "https://github.com/y", false},
		{"https://docs.example.com/{page}", "https://docs.example.com/intro", true},
		{"https://docs.example.com/{page}", "https://docs.example.com.evil/intro", false},
		{"{uri}", "notes://x", false},
	} {
		if got := templateClaims(tc.template, tc.uri); got != tc.want {
			t.Errorf("%s claims %s: %v, want %v", tc.template, tc.uri, got, tc.want)
		}
	}
}
