package rpc

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/mcp/config"
)

// Mask is what a secret is replaced with wherever kin shows or writes it.
const Mask = boundary.Mask

// secretKey matches object keys whose string values are secrets.
var secretKey = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(authorization|token|secret|password|passwd|api[-_]?key|cookie|credential|private[-_]?key|client[-_]?secret|bearer)`)
})

// MaskSecrets returns a copy of a JSON document with secret values masked:
// every value under "headers" or "env", string values of keys that name
// secrets, and URLs as mcp/list shows them (config.MaskURL: no userinfo,
// every query value masked, a fragment's key=value values masked; a "url"
// value in full, a URL inside other text when it has userinfo, a query or
// a fragment). It is
// used for the trace and anywhere a message is logged.
func MaskSecrets(doc []byte) []byte {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return []byte(`"<unparseable message omitted>"`)
	}
	out, err := json.Marshal(maskValue(v, false))
	if err != nil {
		return []byte(`"<unmarshalable message omitted>"`)
	}
	return out
}

func maskValue(v any, all bool) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			switch {
			case k == "headers" || k == "env":
				x[k] = maskValue(val, true)
			case all || secretKey().MatchString(k):
				if _, isStr := val.(string); isStr {
					x[k] = Mask
				} else {
					x[k] = maskValue(val, true)
				}
			case strings.EqualFold(k, "url"):
				if u, isStr := val.(string); isStr {
					x[k] = config.MaskURL(u)
				} else {
					x[k] = maskValue(val, false)
				}
			default:
				x[k] = maskValue(val, false)
			}
		}
		return x
	case []any:
		for i := range x {
			x[i] = maskValue(x[i], all)
		}
		return x
	case string:
		if all {
			return Mask
		}
		return maskURLs(x)
	}
	return v
}

// maskURLs masks the URLs in s that may carry a secret (boundary.MaskURLs:
// userinfo, query values, key=value fragments; a plain #anchor stays).
func maskURLs(s string) string { return boundary.MaskURLs(s) }

// documentText are the methods that carry the content of the person's
// buffers: a .env open in the editor must not end up in a trace, and a
// didChange per keystroke would fill it.
var documentText = map[string]bool{NotifyDidOpen: true, NotifyDidChange: true, MethodApplyEdit: true}

// documentKeys name the strings that hold a file's text: kin serve's
// buffers and edits, an ACP client's fs/* contents and embedded resources.
var documentKeys = map[string]bool{"text": true, "newText": true, "oldText": true, "content": true, "blob": true}

// maskDocumentText replaces every "text", "newText", "oldText", "content"
// and "blob" string of a message
// by its length.
func maskDocumentText(doc []byte) []byte {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return doc
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, val := range x {
				if s, ok := val.(string); ok && documentKeys[k] {
					x[k] = fmt.Sprintf("<%d bytes>", len(s))
					continue
				}
				walk(val)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	out, err := json.Marshal(v)
	if err != nil {
		return doc
	}
	return out
}

// questionMethods are the requests whose input may attach what the
// person's buffers and files hold (turn/start's and turn/steer's parts).
var questionMethods = map[string]bool{"turn/start": true, MethodTurnSteer: true}

// maskAttached replaces what a question's parts attach (the "text" of a
// file, selection or resource part, the "data" of an image: what history
// and turn/started leave out) by its length. Text parts are the person's
// words and stay, as a string input does.
func maskAttached(doc []byte) []byte {
	var msg, params map[string]json.RawMessage
	if json.Unmarshal(doc, &msg) != nil || json.Unmarshal(msg["params"], &params) != nil {
		return doc
	}
	for _, key := range []string{"input", "parts"} {
		var parts []map[string]any
		if json.Unmarshal(params[key], &parts) != nil {
			continue // a string input, or none
		}
		for _, part := range parts {
			if part["type"] == "text" {
				continue
			}
			for _, k := range []string{"text", "data"} {
				if s, ok := part[k].(string); ok {
					part[k] = fmt.Sprintf("<%d bytes>", len(s))
				}
			}
		}
		params[key], _ = json.Marshal(parts)
	}
	msg["params"], _ = json.Marshal(params)
	out, err := json.Marshal(msg)
	if err != nil {
		return doc
	}
	return out
}

// traceOpts write every message in and out as one JSON line: buffer text
// left out (documentText), and what a question attaches.
func traceOpts(w io.Writer) []jsonrpc2.ConnOpt {
	return traceMasked(w, func(req *jsonrpc2.Request) func([]byte) []byte {
		switch {
		case req == nil:
			return nil
		case documentText[req.Method]:
			return maskDocumentText
		case questionMethods[req.Method]:
			return maskAttached
		}
		return nil
	})
}

// TraceOpts are the connection options that write every message in and
// out to w as one JSON line, secrets masked (kin acp's trace is kin
// serve's). hide says which messages carry the content of the person's
// files (given the request, also for its response): their text is
// replaced by its length.
func TraceOpts(w io.Writer, hide func(req *jsonrpc2.Request) bool) []jsonrpc2.ConnOpt {
	return traceMasked(w, func(req *jsonrpc2.Request) func([]byte) []byte {
		if hide(req) {
			return maskDocumentText
		}
		return nil
	})
}

// traceMasked is TraceOpts with mask giving, for a request (and its
// response), what to leave out of it (nil: nothing) before secrets are
// masked.
func traceMasked(w io.Writer, mask func(req *jsonrpc2.Request) func([]byte) []byte) []jsonrpc2.ConnOpt {
	var mu sync.Mutex
	write := func(dir string, req *jsonrpc2.Request, resp *jsonrpc2.Response) {
		var msg any = req
		if resp != nil {
			msg = resp
		}
		b, err := json.Marshal(msg)
		if err != nil {
			return
		}
		b = unaliasID(b) // the id as the editor wrote it
		if m := mask(req); m != nil {
			b = m(b)
		}
		line, _ := json.Marshal(struct {
			Time string          `json:"time"`
			Dir  string          `json:"dir"`
			Msg  json.RawMessage `json:"msg"`
		}{time.Now().UTC().Format(time.RFC3339Nano), dir, MaskSecrets(b)})
		mu.Lock()
		defer mu.Unlock()
		_, _ = w.Write(append(line, '\n'))
	}
	return []jsonrpc2.ConnOpt{
		jsonrpc2.OnRecv(func(req *jsonrpc2.Request, resp *jsonrpc2.Response) {
			write("in", req, resp) // a response comes with the request it answers
		}),
		jsonrpc2.OnSend(func(req *jsonrpc2.Request, resp *jsonrpc2.Response) {
			if resp != nil {
				write("out", nil, resp)
			} else {
				write("out", req, nil)
			}
		}),
	}
}
