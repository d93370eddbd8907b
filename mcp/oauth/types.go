package oauth

import (
	"context"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/mcp/config"
)

// SignInTimeout bounds one sign-in, from discovery to the stored token: the
// person has this long to finish the provider's consent screen. A connect
// that may have to sign in needs at least this budget (see ConnectTimeout).
const SignInTimeout = 300 * time.Second

// DirName is the folder inside KIN_HOME that holds one file per endpoint.
const DirName = "mcp_auth"

// Host is what the Manager needs from kin's front end. Its methods may be
// called from any goroutine, several at once, and never with a Manager lock
// held.
type Host interface {
	// OpenURL shows the sign-in URL to the person (kin: an
	// elicitation/request with mode url and purpose oauth; kin chat prints
	// it). The person opens it in a browser; kin never does. OpenURL may
	// return as soon as the URL is shown, or when the person answered: an
	// error means the person declined, and ends the sign-in. It must return
	// when ctx is done (the sign-in finished, failed or timed out).
	OpenURL(ctx context.Context, req SignIn) error
	// Notice tells the person something about a server's sign-in that
	// needs no answer (a warning: no refresh token was issued, the sign-in
	// could not be saved). It holds no secret.
	Notice(server, message string)
}

// SignIn is a sign-in URL for the person. Nothing in it is a secret: the
// URL carries the public client id, the PKCE challenge and the state.
type SignIn struct {
	Server      string // the server's name
	URL         string // the authorization URL; open it only with consent
	Message     string // what to tell the person, e.g. "Sign in to notion to connect it"
	RedirectURI string // the loopback URI the browser returns to
}

// Options configures a Manager.
type Options struct {
	// KinHome is KIN_HOME; state goes to KinHome/mcp_auth/.
	KinHome string
	// Host shows sign-in URLs. Nil means no person can be asked: a server
	// without a usable stored sign-in fails with KindNeedsLogin.
	Host Host
	// Logger gets the sign-in events (never a credential); nil: none.
	Logger *zap.Logger
	// HTTPClient makes the metadata, registration, token and revocation
	// requests (to the authorization server, not the MCP server). It must
	// not add the MCP server's configured headers. Nil: a client that
	// refuses redirects and keeps go-sdk's guard against private
	// addresses in discovery.
	HTTPClient *http.Client
	// ClientSecret returns the secret of a pre-registered confidential
	// client (oauth.clientId), for the providers that insist on one. kin's
	// configuration has no such field, so kin leaves this nil and its
	// clients are public (PKCE only); the conformance client sets it.
	ClientSecret func(s config.Server) string
	// ClientMetadataURL is the https URL of a client ID metadata document
	// describing kin (SEP-991), used as the client id by authorization
	// servers that accept such documents. kin publishes none yet, so kin
	// leaves it empty and registers dynamically; the conformance client
	// sets it.
	ClientMetadataURL string
}

// StatusInfo describes a server's OAuth setup for mcp/list and mcp/check.
// It never holds a token or a secret.
type StatusInfo struct {
	// Auth is "oauth", or "" for a server that does not sign in.
	Auth string `json:"auth,omitempty"`
	// ClientID is the configured public client id (oauth.clientId), if any.
	ClientID string `json:"clientId,omitempty"`
	// RedirectURI is the redirect URI kin sends, such as
	// http://127.0.0.1:8765/callback. With an ephemeral port (no
	// callbackPort) the port is shown as <ephemeral> and EphemeralPort is
	// set, unless a stored registration names the port kin will try first.
	RedirectURI   string `json:"redirectUri,omitempty"`
	EphemeralPort bool   `json:"ephemeralPort,omitempty"`
	// Registered is set when a dynamically registered client is stored.
	Registered bool `json:"registered,omitempty"`
	// SignedIn is set when a usable sign-in is stored: a later connect
	// needs no person.
	SignedIn bool `json:"signedIn"`
	// Renewable is set when the stored sign-in has a refresh token.
	Renewable bool `json:"renewable,omitempty"`
	// Problem says why OAuth cannot work as configured (the fix included).
	Problem string `json:"problem,omitempty"`
	// LastError is the last failed sign-in of this kin process (the fix
	// included), "" after a success. A connect whose own deadline ended it
	// reports a bare timeout; this says why.
	LastError string `json:"lastError,omitempty"`
}

// Kind classifies an Error.
type Kind string

// Kinds of Error.
const (
	KindConfig       Kind = "config"       // the entry cannot sign in as written (fix the configuration)
	KindNeedsLogin   Kind = "needs_login"  // no usable sign-in, and no person to ask here
	KindDiscovery    Kind = "discovery"    // the server's or authorization server's metadata is unusable
	KindRegistration Kind = "registration" // no client: registration refused or not offered
	KindCallback     Kind = "callback"     // the loopback callback could not listen or got a bad answer
	KindDenied       Kind = "denied"       // the person or the authorization server ended the sign-in
	KindIssuer       Kind = "issuer"       // the callback's RFC 9207 iss is not the expected issuer
	KindTimeout      Kind = "timeout"      // the sign-in did not finish in time
	KindToken        Kind = "token"        // the token endpoint refused the code or the refresh
	KindUnauthorized Kind = "unauthorized" // a server without "auth": "oauth" rejected the request
	KindStore        Kind = "store"        // KIN_HOME/mcp_auth could not be read or written
)

// Error is a sign-in failure. Msg names the fix where there is one, and
// never holds a token, a code or a secret.
type Error struct {
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }
