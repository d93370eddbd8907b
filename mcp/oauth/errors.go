package oauth

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/kin-dev/kin/agent/visible"
	"github.com/kin-dev/kin/mcp/config"
)

// printable drops control and bidi characters from text that came from a
// server, so it cannot spoof a line.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || unicode.In(r, unicode.Cf) {
			return -1
		}
		return r
	}, s)
}

// safeCause is an error's text without what may carry a secret: a URL
// error is reduced to its cause (the URL may hold query credentials) and
// an oauth2.RetrieveError to its status and code (its body is not shown).
func safeCause(err error) string {
	if err == nil {
		return ""
	}
	if re, ok := errorsAs[*oauth2.RetrieveError](err); ok {
		return retrieveText(re)
	}
	if ue, ok := errorsAs[*url.Error](err); ok {
		return printable(ue.Op + ": " + safeCause(ue.Err))
	}
	return printable(err.Error())
}

func retrieveText(re *oauth2.RetrieveError) string {
	msg := "the authorization server answered"
	if re.Response != nil {
		msg += fmt.Sprintf(" HTTP %d", re.Response.StatusCode)
	}
	if re.ErrorCode != "" {
		msg += " " + visible.Cut(printable(re.ErrorCode), 60)
	}
	if re.ErrorDescription != "" {
		msg += ": " + visible.Cut(printable(re.ErrorDescription), 200)
	}
	return msg
}

// scrubber removes the credentials of one sign-in (codes, tokens, client
// secret) from text, as a last guard on everything the flow reports.
type scrubber struct {
	secrets []string
}

func (sc *scrubber) add(vs ...string) {
	for _, v := range vs {
		if len(v) >= 4 {
			sc.secrets = append(sc.secrets, v)
		}
	}
}

func (sc *scrubber) clean(s string) string {
	for _, v := range sc.secrets {
		s = strings.ReplaceAll(s, v, config.Mask)
		if q := url.QueryEscape(v); q != v {
			s = strings.ReplaceAll(s, q, config.Mask)
		}
	}
	return s
}

var registrationStatus = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`registration failed with status (\d{3})`) })

// registrationError explains a refused dynamic registration: the fix is a
// pre-registered application named in oauth.clientId.
func registrationError(err error, redirect string) *Error {
	fix := fmt.Sprintf("set oauth.clientId to an application id registered with the provider, with the redirect URI %s (set oauth.callbackPort to its port)", redirect)
	if ce, ok := errorsAs[*oauthex.ClientRegistrationError](err); ok {
		detail := "HTTP 400 " + visible.Cut(printable(ce.ErrorCode), 60)
		if ce.ErrorDescription != "" {
			detail += ": " + visible.Cut(printable(ce.ErrorDescription), 160)
		}
		return &Error{Kind: KindRegistration, Msg: "the authorization server rejected dynamic client registration (" + detail + "): " + fix}
	}
	if m := registrationStatus().FindStringSubmatch(err.Error()); m != nil {
		return &Error{Kind: KindRegistration, Msg: "the authorization server rejected dynamic client registration (HTTP " + m[1] + "); it probably does not offer it: " + fix}
	}
	if _, ok := errorsAs[*url.Error](err); ok {
		return &Error{Kind: KindRegistration, Msg: "dynamic client registration failed: " + visible.Cut(safeCause(err), 200)}
	}
	// Anything else (an unreadable answer) would quote the body, which may
	// hold a client secret: keep only the fix.
	return &Error{Kind: KindRegistration, Msg: "the authorization server's answer to dynamic client registration was unusable: " + fix}
}

// noRegistrationError is the error when the authorization server offers no
// registration endpoint and no client id is configured.
func noRegistrationError(redirect string) *Error {
	return &Error{Kind: KindRegistration, Msg: fmt.Sprintf(
		"the authorization server does not offer dynamic client registration: set oauth.clientId to an application id registered with the provider, with the redirect URI %s (set oauth.callbackPort to its port)", redirect)}
}

// explain turns an error of go-sdk's authorization flow into an Error that
// names the fix and holds no credential.
func explain(err error, redirect string, sc *scrubber) error {
	if err == nil {
		return nil
	}
	if e, ok := errorsAs[*Error](err); ok {
		return e
	}
	text := sc.clean(printable(err.Error()))
	switch {
	case strings.Contains(text, "authorization response issuer") || strings.Contains(text, "RFC 9207"):
		return &Error{Kind: KindIssuer, Msg: "the sign-in callback did not come from the expected authorization server (RFC 9207 iss check): " + visible.Cut(text, 300) + "; sign-in refused"}
	case strings.Contains(text, "state mismatch"):
		return &Error{Kind: KindCallback, Msg: "the sign-in callback carried the wrong state; sign-in refused"}
	case strings.Contains(text, "token exchange failed"):
		cause := "it refused"
		if re, ok := errorsAs[*oauth2.RetrieveError](err); ok {
			cause = sc.clean(retrieveText(re))
		} else if ue, ok := errorsAs[*url.Error](err); ok {
			cause = sc.clean(safeCause(ue))
		}
		return &Error{Kind: KindToken, Msg: fmt.Sprintf(
			"the authorization server did not exchange the sign-in code for a token (%s). If it reports a redirect URI mismatch, the application must be registered with exactly %s",
			visible.Cut(cause, 300), redirect)}
	case strings.Contains(text, "authorization server metadata") || strings.Contains(text, "protected resource metadata") ||
		strings.Contains(text, "GetProtectedResourceMetadata") || strings.Contains(text, "does not implement PKCE"):
		return &Error{Kind: KindDiscovery, Msg: "discovering how to sign in failed: " + visible.Cut(text, 300)}
	case errors.Is(err, errRedirect):
		return &Error{Kind: KindDiscovery, Msg: "the authorization server answered with a redirect, which kin does not follow"}
	}
	return &Error{Kind: KindToken, Msg: "sign-in failed: " + visible.Cut(text, 300)}
}
