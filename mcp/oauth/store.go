package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/oauth2"

	"github.com/kin-dev/kin/agent/lockedfile"
)

// record is one endpoint's file, KIN_HOME/mcp_auth/<key>.json (mode 0600).
// Server and Endpoint are for the person who looks into the folder (the
// masked URL, never a header); Client is a dynamic registration; Token is
// the sign-in with everything needed to renew it.
type record struct {
	Version  int           `json:"version"`
	Server   string        `json:"server,omitempty"`
	Endpoint string        `json:"endpoint,omitempty"`
	Client   *clientRecord `json:"client,omitempty"`
	Token    *tokenRecord  `json:"token,omitempty"`
	// SignInFailed is when the last sign-in asked for here failed: a kin
	// that waited for it does not ask again at once (see signInHere).
	SignInFailed time.Time `json:"signInFailed,omitzero"`
}

// clientRecord is a dynamically registered client.
type clientRecord struct {
	ClientID     string    `json:"clientId"`
	ClientSecret string    `json:"clientSecret,omitempty"`
	AuthMethod   string    `json:"authMethod,omitempty"`
	Issuer       string    `json:"issuer"`
	RedirectURI  string    `json:"redirectUri"`
	RegisteredAt time.Time `json:"registeredAt"`
}

// String never shows the secret.
func (c *clientRecord) String() string {
	return fmt.Sprintf("client %s at %s (redirect %s)", c.ClientID, c.Issuer, c.RedirectURI)
}

// tokenRecord is a sign-in: the token and the client and endpoint that
// renew it.
type tokenRecord struct {
	AccessToken   string    `json:"accessToken"`
	RefreshToken  string    `json:"refreshToken,omitempty"`
	TokenType     string    `json:"tokenType,omitempty"`
	Expiry        time.Time `json:"expiry,omitzero"`
	Scopes        []string  `json:"scopes,omitempty"`
	ClientID      string    `json:"clientId"`
	ClientSecret  string    `json:"clientSecret,omitempty"`
	TokenURL      string    `json:"tokenUrl"`
	AuthStyle     int       `json:"authStyle,omitempty"`
	Issuer        string    `json:"issuer,omitempty"`
	RevocationURL string    `json:"revocationUrl,omitempty"`
	Resource      string    `json:"resource,omitempty"`
	ObtainedAt    time.Time `json:"obtainedAt"`
}

// String never shows a credential.
func (t *tokenRecord) String() string {
	return fmt.Sprintf("sign-in for client %s (renewable %v, expires %s)", t.ClientID, t.RefreshToken != "", t.Expiry.Format(time.RFC3339))
}

func (t *tokenRecord) token() *oauth2.Token {
	return &oauth2.Token{AccessToken: t.AccessToken, RefreshToken: t.RefreshToken, TokenType: t.TokenType, Expiry: t.Expiry}
}

func (t *tokenRecord) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID:     t.ClientID,
		ClientSecret: t.ClientSecret,
		Endpoint:     oauth2.Endpoint{TokenURL: t.TokenURL, AuthStyle: oauth2.AuthStyle(t.AuthStyle)},
	}
}

// store reads and writes the endpoint files. Writes hold an flock on
// "<file>.lock" (package lockedfile), so kin processes sharing a KIN_HOME
// never tear a file.
type store struct {
	dir string
}

func (st *store) path(key string) string { return filepath.Join(st.dir, key+".json") }

// read returns the endpoint's record, or an empty one when there is none.
// A file that others can read is narrowed to 0600 first.
func (st *store) read(key string) (*record, error) {
	p := st.path(key)
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return &record{Version: 1}, nil
	}
	if err != nil {
		return nil, storeError("read", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(p, 0o600); err != nil {
			return nil, storeError("protect", err)
		}
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, storeError("read", err)
	}
	r := &record{}
	if err := json.Unmarshal(data, r); err != nil {
		// A damaged file is no sign-in; the next save replaces it.
		return &record{Version: 1}, nil
	}
	return r, nil
}

// update applies fn to the endpoint's record under the file lock and
// writes the result (0600, in a 0700 folder).
func (st *store) update(key string, fn func(r *record) error) error {
	return st.locked(key, func(r *record) (bool, error) { return true, fn(r) })
}

// locked runs fn on the endpoint's record under the file lock, and writes
// the record when fn says so: a renewal looks at what other kin processes
// stored and spends the refresh token inside the lock.
func (st *store) locked(key string, fn func(r *record) (write bool, err error)) error {
	if err := os.MkdirAll(st.dir, 0o700); err != nil {
		return storeError("create", err)
	}
	if fi, err := os.Stat(st.dir); err == nil && fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(st.dir, 0o700); err != nil {
			return storeError("protect", err)
		}
	}
	err := lockedfile.Update(st.path(key), func(data []byte, exists bool) ([]byte, error) {
		r := &record{}
		if !exists || json.Unmarshal(data, r) != nil {
			r = &record{}
		}
		if write, err := fn(r); err != nil || !write {
			return nil, err
		}
		r.Version = 1
		return json.MarshalIndent(r, "", "  ")
	})
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return e
		}
		return storeError("write", err)
	}
	return nil
}

// storeError keeps the path (no secret in it) and the OS reason.
func storeError(verb string, err error) *Error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &Error{Kind: KindStore, Msg: fmt.Sprintf("could not %s the sign-in file %s: %v", verb, pe.Path, pe.Err)}
	}
	return &Error{Kind: KindStore, Msg: fmt.Sprintf("could not %s the sign-in file: %v", verb, err)}
}
