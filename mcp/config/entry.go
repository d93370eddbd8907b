package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// entry is one server entry decoded with its types checked but nothing
// expanded. Unknown fields are ignored here (they stay in the raw JSON).
type entry struct {
	typ        string
	command    string
	hasCommand bool
	args       []string
	url        string
	hasURL     bool
	headers    map[string]string
	env        map[string]string
	timeout    int
	disabled   bool
	allowed    []string
	allowedSet bool
	auth       string
	oauth      *oauthEntry
	sandbox    *Sandbox
}

type oauthEntry struct {
	clientID string
	host     string
	port     int
	scopes   []string
}

// knownFields are the entry fields kin interprets; Update replaces these and
// keeps every other field of the old entry.
var knownFields = map[string]bool{
	"type": true, "command": true, "args": true, "url": true, "headers": true,
	"env": true, "timeout": true, "disabled": true, "allowed_tools": true,
	"allowedTools": true, "auth": true, "oauth": true,
}

// fields is a JSON object's members; a null member counts as absent.
type fields map[string]json.RawMessage

func objectFields(raw json.RawMessage) (fields, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, errors.New("entry is not a JSON object")
	}
	var m fields
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, errors.New("entry is not a JSON object")
	}
	for k, v := range m {
		if string(bytes.TrimSpace(v)) == "null" {
			delete(m, k)
		}
	}
	return m, nil
}

// decodeEntry checks the types of the known fields of a raw entry.
func decodeEntry(raw json.RawMessage) (*entry, error) {
	f, err := objectFields(raw)
	if err != nil {
		return nil, err
	}
	e := &entry{}
	var errs []error
	note := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var ok bool
	_, err = f.str("type", &e.typ)
	note(err)
	e.hasCommand, err = f.str("command", &e.command)
	note(err)
	_, err = f.strList("args", &e.args)
	note(err)
	e.hasURL, err = f.str("url", &e.url)
	note(err)
	_, err = f.strMap("headers", &e.headers)
	note(err)
	_, err = f.strMap("env", &e.env)
	note(err)
	_, err = f.integer("timeout", &e.timeout)
	note(err)
	_, err = f.boolean("disabled", &e.disabled)
	note(err)
	var alt []string
	e.allowedSet, err = f.strList("allowed_tools", &e.allowed)
	note(err)
	ok, err = f.strList("allowedTools", &alt)
	note(err)
	if ok && e.allowedSet {
		note(errors.New(`both "allowed_tools" and "allowedTools" are set`))
	} else if ok {
		e.allowed, e.allowedSet = alt, true
	}
	if e.allowedSet && e.allowed == nil {
		e.allowed = []string{} // present but empty: expose nothing
	}
	_, err = f.str("auth", &e.auth)
	note(err)
	if raw, ok := f["oauth"]; ok {
		e.oauth, err = decodeOAuth(raw)
		note(err)
	}
	if raw, ok := f["sandbox"]; ok {
		e.sandbox, err = decodeSandbox(raw)
		note(err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return e, nil
}

// decodeOAuth decodes the oauth block, accepting camelCase and snake_case.
func decodeOAuth(raw json.RawMessage) (*oauthEntry, error) {
	f, err := objectFields(raw)
	if err != nil {
		return nil, errors.New(`"oauth" must be an object`)
	}
	o := &oauthEntry{}
	var errs []error
	pick := func(camel, snake string, get func(fields, string) (bool, error)) {
		if _, a := f[camel]; a {
			if _, b := f[snake]; b {
				errs = append(errs, fmt.Errorf(`oauth: both %q and %q are set`, camel, snake))
				return
			}
		}
		name := camel
		if _, a := f[camel]; !a {
			name = snake
		}
		if _, err := get(f, name); err != nil {
			errs = append(errs, fmt.Errorf("oauth.%w", err))
		}
	}
	pick("clientId", "client_id", func(f fields, k string) (bool, error) { return f.str(k, &o.clientID) })
	pick("callbackHost", "callback_host", func(f fields, k string) (bool, error) { return f.str(k, &o.host) })
	pick("callbackPort", "callback_port", func(f fields, k string) (bool, error) { return f.integer(k, &o.port) })
	if _, err := f.strList("scopes", &o.scopes); err != nil {
		errs = append(errs, fmt.Errorf("oauth.%w", err))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return o, nil
}

func (f fields) str(key string, dst *string) (bool, error) {
	raw, ok := f[key]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return true, fmt.Errorf("%q must be a string", key)
	}
	return true, nil
}

func (f fields) boolean(key string, dst *bool) (bool, error) {
	raw, ok := f[key]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return true, fmt.Errorf("%q must be true or false", key)
	}
	return true, nil
}

func (f fields) integer(key string, dst *int) (bool, error) {
	raw, ok := f[key]
	if !ok {
		return false, nil
	}
	var n json.Number
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if isString(raw) || d.Decode(&n) != nil {
		return true, fmt.Errorf("%q must be a whole number", key)
	}
	v, err := n.Int64()
	if err != nil || v < 0 || v > 1<<31-1 {
		return true, fmt.Errorf("%q must be a whole number from 0 to 2147483647", key)
	}
	*dst = int(v)
	return true, nil
}

func (f fields) strList(key string, dst *[]string) (bool, error) {
	raw, ok := f[key]
	if !ok {
		return false, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return true, fmt.Errorf("%q must be an array of strings", key)
	}
	out := make([]string, 0, len(list))
	for i, item := range list {
		var s string
		if !isString(item) || json.Unmarshal(item, &s) != nil {
			return true, fmt.Errorf("%s[%d] must be a string", key, i)
		}
		out = append(out, s)
	}
	*dst = out
	return true, nil
}

func (f fields) strMap(key string, dst *map[string]string) (bool, error) {
	raw, ok := f[key]
	if !ok {
		return false, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return true, fmt.Errorf("%q must be an object of strings", key)
	}
	out := make(map[string]string, len(m))
	for k, item := range m {
		var s string
		if !isString(item) || json.Unmarshal(item, &s) != nil {
			return true, fmt.Errorf("%s.%s must be a string", key, k)
		}
		out[k] = s
	}
	*dst = out
	return true, nil
}

// transport decides the live transport of an entry, or why it has none.
func (e *entry) transport() (Transport, error) {
	switch t := strings.ToLower(strings.TrimSpace(e.typ)); t {
	case "sse":
		return "", errors.New(`type "sse" is deprecated and not supported; use "http" (streamable HTTP)`)
	case "ws", "websocket":
		return "", fmt.Errorf("type %q is not supported (not an MCP transport)", e.typ)
	case "", "stdio", "http", "streamable-http", "streamable_http", "streamablehttp":
		if e.hasCommand && e.hasURL {
			return "", errors.New(`both "command" and "url" are set; use one`)
		}
		switch {
		case t == "stdio" && !e.hasCommand:
			return "", errors.New(`type "stdio" needs "command"`)
		case t != "" && t != "stdio" && !e.hasURL:
			return "", fmt.Errorf("type %q needs \"url\"", e.typ)
		case e.hasCommand:
			return TransportStdio, nil
		case e.hasURL:
			return TransportHTTP, nil
		default:
			return "", errors.New(`neither "command" nor "url" is set`)
		}
	default:
		return "", fmt.Errorf("unknown transport type %.40q", e.typ)
	}
}

// isString reports whether raw JSON is a string (not null).
func isString(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '"'
}
