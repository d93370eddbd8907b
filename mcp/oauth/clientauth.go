package oauth

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/oauth2"
)

// Token endpoint client authentication methods (RFC 7591 section 2).
const (
	methodNone   = "none"
	methodBasic  = "client_secret_basic"
	methodPost   = "client_secret_post"
	maxTokenForm = 1 << 20
)

// registeredMethod is the method a registration answer implies: the one it
// names, else client_secret_basic for a client with a secret (RFC 7591's
// default) and none for one without.
func registeredMethod(method, secret string) string {
	switch method {
	case methodNone, methodBasic, methodPost:
		return method
	}
	if secret == "" {
		return methodNone
	}
	return methodBasic
}

// authStyle is oauth2's spelling of a method (used for renewals).
func authStyle(method string) oauth2.AuthStyle {
	switch method {
	case methodNone, methodPost:
		return oauth2.AuthStyleInParams
	case methodBasic:
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleAutoDetect
}

// formTransport rewrites the form of every POST to the token endpoint
// tokenURL with edit (which may change the request's headers too), and
// passes every other request on untouched: oauth2 and go-sdk build token
// requests with no way to change them otherwise.
type formTransport struct {
	base     http.RoundTripper
	tokenURL string
	edit     func(r *http.Request, form url.Values)
}

func (t *formTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || !sameEndpoint(req.URL, t.tokenURL) || req.Body == nil ||
		!strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		return t.base.RoundTrip(req)
	}
	data, err := io.ReadAll(io.LimitReader(req.Body, maxTokenForm))
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	form, err := url.ParseQuery(string(data))
	if err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	t.edit(r, form)
	body := []byte(form.Encode())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return t.base.RoundTrip(r)
}

// withForm returns a copy of c whose token requests at tokenURL go
// through edit.
func withForm(c *http.Client, tokenURL string, edit func(*http.Request, url.Values)) *http.Client {
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cc := *c
	cc.Transport = &formTransport{base: base, tokenURL: tokenURL, edit: edit}
	return &cc
}

func sameEndpoint(u *url.URL, raw string) bool {
	v, err := url.Parse(raw)
	return err == nil && strings.EqualFold(u.Scheme, v.Scheme) && strings.EqualFold(u.Host, v.Host) &&
		strings.TrimSuffix(u.Path, "/") == strings.TrimSuffix(v.Path, "/")
}

// withClientAuth returns a copy of c whose token requests authenticate the
// client the way it was registered ("" leaves c as it is). go-sdk picks
// the token endpoint's client authentication from the methods the
// authorization server advertises, not from the client's registration, so
// a public client ("none") can end up sending an empty Basic password,
// which strict servers refuse. The credentials are moved to where the
// method puts them (none: client_id in the form and nothing else;
// client_secret_post: both in the form; client_secret_basic: the header).
func withClientAuth(c *http.Client, tokenURL, method, clientID, secret string) *http.Client {
	if method == "" {
		return c
	}
	return withForm(c, tokenURL, func(r *http.Request, form url.Values) {
		r.Header.Del("Authorization")
		form.Del("client_secret")
		switch method {
		case methodNone:
			form.Set("client_id", clientID)
		case methodPost:
			form.Set("client_id", clientID)
			form.Set("client_secret", secret)
		case methodBasic:
			form.Del("client_id")
			r.SetBasicAuth(url.QueryEscape(clientID), url.QueryEscape(secret))
		}
	})
}

// withResource returns a copy of c whose renewals at tokenURL name
// resource (RFC 8707; "" leaves c as it is): oauth2 sends a refresh_token
// grant with no way to add a parameter, and the MCP spec wants the
// resource in every token request, so that the token stays bound to the
// server it is for (a provider with a default audience otherwise answers
// with a token for that audience). Only renewals that name no resource
// are touched.
func withResource(c *http.Client, tokenURL, resource string) *http.Client {
	if resource == "" {
		return c
	}
	return withForm(c, tokenURL, func(_ *http.Request, form url.Values) {
		if form.Get("grant_type") == "refresh_token" && form.Get("resource") == "" {
			form.Set("resource", resource)
		}
	})
}
