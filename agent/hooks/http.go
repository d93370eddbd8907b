package hooks

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/sendonce"
)

// hookTransport carries http hooks' requests (its connections kept
// between them), made at the first hook, not at every kin's start; a test
// puts its own in its place (testTransport).
var hookTransport = sync.OnceValue(func() http.RoundTripper { return http.DefaultTransport.(*http.Transport).Clone() })

// testTransport, when set, carries http hooks' requests instead.
var testTransport http.RoundTripper

// hookClient is the client http hooks are sent with. It follows no
// redirect: the input would go to a URL the person did not configure. It
// sends a request that went out whole once (sendonce): the HTTP/2
// transport would send a hook's POST again, and again, on a reset stream,
// and each would be another event at the person's hook server.
func hookClient() *http.Client {
	return &http.Client{
		Transport:     sendonce.Transport(cmp.Or(testTransport, hookTransport())),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// runHTTP POSTs the hook's input to its URL. A 2xx answer's body is read
// as a command hook's stdout with exit code 0; any other answer, a
// redirect, an error or the timeout is a failure, blocking nothing. The
// URL appears only masked (boundary.MaskURL) and header values never.
func (r Runner) runHTTP(ctx context.Context, h Hook, input []byte) Result {
	res := Result{Hook: h}
	where := boundary.MaskURL(h.URL)
	if p := checkURL(h.URL); p != "" {
		res.Failure = p
		return res
	}
	tctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(tctx, http.MethodPost, h.URL, bytes.NewReader(input))
	if err != nil {
		res.Failure = "could not make its request to " + where + "; it blocks nothing"
		return res
	}
	req.Header.Set("Content-Type", "application/json")
	env := r.headerEnv()
	for name, tmpl := range h.Headers {
		v := expandHeader(tmpl, h.AllowedEnvVars, env)
		if !validHeaderValue(v) {
			res.Failure = fmt.Sprintf("its header %s has a value HTTP does not allow (a line break or control character); nothing was sent", name)
			return res
		}
		req.Header.Set(name, v)
	}
	resp, err := hookClient().Do(req)
	switch {
	case ctx.Err() != nil:
		res.Failure = "stopped: the turn was cancelled"
		return res
	case tctx.Err() != nil:
		res.Failure = fmt.Sprintf("%s did not answer within %v; it blocks nothing", where, h.Timeout)
		return res
	case err != nil:
		// url.Error repeats the URL whole: only what went wrong is said
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		res.Failure = fmt.Sprintf("could not POST to %s (%s); it blocks nothing", where, boundary.MaskURLs(err.Error()))
		return res
	}
	defer resp.Body.Close()
	// bounded like a command's stdout; what is past it is not read at all
	var body limited
	body.n = maxOutput
	_, err = io.Copy(&body, io.LimitReader(resp.Body, maxOutput))
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		res.Failure = fmt.Sprintf("%s answered with a redirect (HTTP %d); kin does not follow it, since your hook's input would go where you did not configure; it blocks nothing", where, resp.StatusCode)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		res.Failure = fmt.Sprintf("%s answered HTTP %d; it blocks nothing", where, resp.StatusCode)
	case err != nil && tctx.Err() != nil:
		res.Failure = fmt.Sprintf("%s did not finish its answer within %v; it blocks nothing", where, h.Timeout)
	case err != nil:
		res.Failure = fmt.Sprintf("reading the answer of %s failed; it blocks nothing", where)
	default:
		res.parse(body.String())
	}
	return res
}

// headerEnv is the environment header values are expanded from: the one
// command hooks get, so kin's model keys are not in it.
func (r Runner) headerEnv() []string {
	environ := r.Env
	if environ == nil {
		environ = os.Environ()
	}
	return boundary.CommandEnv(environ, r.KinHome)
}

// expandHeader puts variables for $VAR and ${VAR} in a header value: only
// those allowed names, from env; any other name is "".
func expandHeader(tmpl string, allowed, env []string) string {
	return os.Expand(tmpl, func(name string) string {
		if !slices.Contains(allowed, name) {
			return ""
		}
		for i := len(env) - 1; i >= 0; i-- {
			if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
				return v
			}
		}
		return ""
	})
}

// validHeaderValue reports whether v may be sent as a header value: no
// control character but a tab (a line break would start another header).
func validHeaderValue(v string) bool {
	for _, c := range []byte(v) {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
