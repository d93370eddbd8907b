package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kin-dev/kin/agent/visible"
)

// MaxNameLength is the longest server name Store.Add accepts, in characters.
const MaxNameLength = 64

// CheckName says whether a new server may be added under name: 1 to 64
// characters of valid UTF-8, none of them a control or invisible
// formatting character (bidi controls, zero-width characters). A name
// outside these rules could not be told apart from another one: JSON turns
// bytes that are not UTF-8 into U+FFFD, so two such names would be stored
// as one that neither spells (U+FFFD itself is refused for that reason). The
// error wraps ErrBadName.
func CheckName(name string) error {
	problem := ""
	switch n := utf8.RuneCountInString(name); {
	case !utf8.ValidString(name):
		problem = "it is not valid UTF-8"
	case strings.TrimSpace(name) == "":
		problem = "it is empty"
	case n > MaxNameLength:
		problem = fmt.Sprintf("it has %d characters", n)
	case strings.ContainsRune(name, utf8.RuneError):
		problem = "it contains U+FFFD, which stands for bytes that are not UTF-8"
	case strings.IndexFunc(name, func(r rune) bool { return unicode.IsControl(r) || visible.Hidden(r) }) >= 0:
		problem = "it contains a control or invisible formatting character"
	}
	if problem == "" {
		return nil
	}
	return fmt.Errorf("%w %.80q: %s; a name is 1 to %d characters of valid UTF-8 without control or invisible formatting characters",
		ErrBadName, name, problem, MaxNameLength)
}

// checkEntry validates everything about an entry that does not depend on the
// environment, and returns its transport. It is used on load (before
// expansion) and before any write, so kin never writes an entry it would
// skip for its shape.
func checkEntry(name string, e *entry) (Transport, error) {
	if strings.TrimSpace(name) == "" {
		return "", errors.New("empty server name")
	}
	t, err := e.transport()
	if err != nil {
		return "", err
	}
	var errs []error
	refs := func(field, s string) {
		if _, err := parseRefs(s); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", field, err))
		}
	}
	switch t {
	case TransportStdio:
		if e.command == "" {
			errs = append(errs, errors.New(`"command" is empty`))
		}
		refs("command", e.command)
		for i, a := range e.args {
			refs(fmt.Sprintf("args[%d]", i), a)
		}
		for _, k := range sortedKeys(e.env) {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				errs = append(errs, fmt.Errorf("env: invalid variable name %.40q", k))
			}
			refs("env."+k, e.env[k])
		}
		if e.auth != "" || e.oauth != nil {
			errs = append(errs, errors.New(`"auth"/"oauth" apply only to http servers`))
		}
	case TransportHTTP:
		refs("url", e.url)
		if !hasRefs(e.url) {
			if err := checkURL(e.url); err != nil {
				errs = append(errs, err)
			}
		}
		for _, k := range sortedKeys(e.headers) {
			if !validHeaderName(k) {
				errs = append(errs, fmt.Errorf("headers: invalid header name %.40q", k))
			}
			refs("headers."+k, e.headers[k])
		}
		if e.auth != "" && e.auth != "oauth" {
			errs = append(errs, fmt.Errorf(`unknown auth %.40q (only "oauth")`, e.auth))
		}
		if o := e.oauth; o != nil {
			refs("oauth.clientId", o.clientID)
			switch o.host {
			case "", "127.0.0.1":
			case "localhost":
				if o.port == 0 {
					errs = append(errs, errors.New(`oauth: callbackHost "localhost" requires callbackPort`))
				}
			default:
				errs = append(errs, errors.New(`oauth: callbackHost must be "127.0.0.1" or "localhost" (loopback only)`))
			}
			if o.port > 65535 {
				errs = append(errs, errors.New("oauth: callbackPort must be from 1 to 65535"))
			}
		}
	}
	return t, errors.Join(errs...)
}

// checkResolved validates the expanded launch fields of a server.
func checkResolved(s *Server) error {
	var errs []error
	switch s.Transport {
	case TransportStdio:
		if s.Command == "" {
			errs = append(errs, errors.New(`"command" is empty after expansion`))
		}
		for _, k := range sortedKeys(s.Env) {
			if strings.ContainsRune(s.Env[k], 0) {
				errs = append(errs, fmt.Errorf("env.%s: value contains a NUL byte", k))
			}
		}
	case TransportHTTP:
		if err := checkURL(s.URL); err != nil {
			errs = append(errs, err)
		}
		for _, k := range sortedKeys(s.Headers) {
			if strings.ContainsAny(s.Headers[k], "\r\n\x00") {
				errs = append(errs, fmt.Errorf("headers.%s: value contains a line break or NUL", k))
			}
		}
	}
	return errors.Join(errs...)
}

// checkURL accepts an absolute https URL, or http to a loopback host. The
// messages never quote the URL, which may carry credentials.
func checkURL(raw string) error {
	if raw == "" {
		return errors.New(`"url" is empty`)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return errors.New(`"url" must be an absolute http(s) URL`)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !isLoopback(u.Hostname()) {
			return errors.New(`"url" must use https (plain http only to localhost or a loopback address)`)
		}
	default:
		return errors.New(`"url" scheme must be http or https`)
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// validHeaderName reports whether k is an HTTP token (RFC 9110).
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if r > 0x7e || r <= ' ' || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// oneLineErr flattens a (possibly joined) error into one line.
func oneLineErr(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}
