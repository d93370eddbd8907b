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

// clientAuthTransport makes the code exchange authenticate the client the
// way it was registered. go-sdk picks the token endpoint's client
// authentication from the methods the authorization server advertises, not
// from the client's registration, so a public client ("none") can end up
// sending an empty Basic password, which strict servers refuse. Only POSTs
// to the token endpoint are touched: their credentials are moved to where
// the method puts them (none: client_id in the form and nothing else;
// client_secret_post: both in the form; client_secret_basic: the header).
type clientAuthTransport struct {
	base     http.RoundTripper
	tokenURL string
	method   string
	clientID string
	secret   string
}

func (t *clientAuthTransport) RoundTrip(req *http.Request) (*http.Response, error) {
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
	r.Header.Del("Authorization")
	form.Del("client_secret")
	switch t.method {
	case methodNone:
		form.Set("client_id", t.clientID)
	case methodPost:
		form.Set("client_id", t.clientID)
		form.Set("client_secret", t.secret)
	case methodBasic:
		form.Del("client_id")
		r.SetBasicAuth(url.QueryEscape(t.clientID), url.QueryEscape(t.secret))
	}
	body := []byte(form.Encode())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return t.base.RoundTrip(r)
}

func sameEndpoint(u *url.URL, raw string) bool {
	v, err := url.Parse(raw)
	return err == nil && strings.EqualFold(u.Scheme, v.Scheme) && strings.EqualFold(u.Host, v.Host) &&
		strings.TrimSuffix(u.Path, "/") == strings.TrimSuffix(v.Path, "/")
}

// withClientAuth returns a copy of c whose token requests authenticate as
// the method says ("" leaves c as it is).
func withClientAuth(c *http.Client, tokenURL, method, clientID, secret string) *http.Client {
	if method == "" {
		return c
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cc := *c
	cc.Transport = &clientAuthTransport{base: base, tokenURL: tokenURL, method: method, clientID: clientID, secret: secret}
	return &cc
}

// resourceTransport names the resource (RFC 8707) in renewals: oauth2
// sends a refresh_token grant with no way to add a parameter, and the MCP
// spec wants the resource in every token request, so that the token stays
// bound to the server it is for (a provider with a default audience
// otherwise answers with a token for that audience). Only refresh_token
// POSTs to the token endpoint that name no resource are touched.
type resourceTransport struct {
	base     http.RoundTripper
	tokenURL string
	resource string
}

func (t *resourceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
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
	if form.Get("grant_type") == "refresh_token" && form.Get("resource") == "" {
		form.Set("resource", t.resource)
	}
	body := []byte(form.Encode())
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return t.base.RoundTrip(r)
}

// withResource returns a copy of c whose renewals at tokenURL name
// resource ("" leaves c as it is).
func withResource(c *http.Client, tokenURL, resource string) *http.Client {
	if resource == "" {
		return c
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cc := *c
	cc.Transport = &resourceTransport{base: base, tokenURL: tokenURL, resource: resource}
	return &cc
}
