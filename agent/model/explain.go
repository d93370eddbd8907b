package model

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// maxSSELine is the longest event line openai-go's stream decoder reads
// (bufio.MaxScanTokenSize<<9, in packages/ssestream).
const maxSSELine = bufio.MaxScanTokenSize << 9

// httpFailure remembers what the service answered, so a failure can be
// explained without the SDK's root package: whether it answered at all,
// and for an error answer its status, message, body and Retry-After.
type httpFailure struct {
	answered   bool
	status     int
	message    string        // the OpenAI-style error message, if the body had one
	param      string        // and the parameter it names
	code       string        // and its code
	body       string        // otherwise, what the body was (see describeBody)
	retryAfter time.Duration // 0: the service did not say
}

func (f *httpFailure) capture(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	resp, err := next(req)
	if resp == nil {
		return resp, err
	}
	f.answered = true
	if resp.StatusCode < 400 {
		return resp, err
	}
	f.status = resp.StatusCode
	f.retryAfter = retryAfter(resp.Header, time.Now())
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var e struct {
		Error struct {
			Message string `json:"message"`
			Param   any    `json:"param"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		f.message = e.Error.Message
		f.param, _ = e.Error.Param.(string)
		f.code, _ = e.Error.Code.(string)
	} else {
		f.body = describeBody(resp.Header.Get("Content-Type"), body)
	}
	return resp, err
}

// retryAfter reads how long the service asks to wait: Retry-After-Ms (the
// OpenAI API's own header), else Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 && ms < math.MaxInt64/1e6 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < math.MaxInt64/1e9 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

var htmlTitle = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)

// describeBody says what an error body that is not an API error holds:
// nothing, an HTML page (usually a proxy's or a gateway's, not the API's),
// or text, cut short and without control characters.
func describeBody(contentType string, body []byte) string {
	text := strings.TrimSpace(string(body))
	if text == "" {
		return "with an empty body"
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	if strings.Contains(mt, "html") || strings.HasPrefix(text, "<") {
		page := "with an HTML page instead of an API error, so a proxy or gateway in front of the service probably answered"
		if m := htmlTitle.FindStringSubmatch(text); m != nil {
			if title := clean(m[1], 80); title != "" {
				page = fmt.Sprintf("with an HTML page titled %q instead of an API error, so a proxy or gateway in front of the service probably answered", title)
			}
		}
		return page
	}
	return fmt.Sprintf("with %q", clean(text, 200))
}

// clean collapses white space, drops control and format characters (no
// bidi tricks in an error message) and cuts s to max runes.
func clean(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r):
			return ' '
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

// waitHint says how long to wait before trying again, when the service said.
func waitHint(d time.Duration) string {
	switch {
	case d <= 0:
		return "wait a little and try again"
	case d < time.Minute:
		return fmt.Sprintf("wait %d s and try again", int(math.Ceil(d.Seconds())))
	}
	return fmt.Sprintf("wait %v and try again", d.Round(time.Second))
}

// explain turns a transport or API error into a sentence a person
// understands, saying what really happened. It never includes the
// request's headers or URL (a base URL may carry a key).
func explain(ctx context.Context, err error, f httpFailure) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var idle *IdleError
	if errors.As(err, &idle) {
		return idle
	}
	code := f.status
	if code == 0 {
		return explainStream(err, f.answered)
	}
	detail := f.message
	if detail == "" && f.body != "" {
		detail = "it answered " + f.body
	}
	with := func(s string) error {
		if detail == "" {
			return errors.New(s)
		}
		return fmt.Errorf("%s (%s)", s, detail)
	}
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return fmt.Errorf("the model service rejected the API key (HTTP %d): check OPENAI_API_KEY", code)
	case code == http.StatusTooManyRequests:
		return with(fmt.Sprintf("the model service is rate limiting or out of quota (HTTP 429): %s", waitHint(f.retryAfter)))
	case code == http.StatusNotFound:
		return with("the model service does not know this model or endpoint (HTTP 404): check KIN_MODEL and OPENAI_BASE_URL")
	case code == http.StatusServiceUnavailable:
		return with(fmt.Sprintf("the model service is unavailable or overloaded (HTTP 503): %s", waitHint(f.retryAfter)))
	case code >= 500:
		hint := "try again later"
		if f.retryAfter > 0 {
			hint = waitHint(f.retryAfter)
		}
		return with(fmt.Sprintf("the model service failed (HTTP %d %s): %s", code, http.StatusText(code), hint))
	}
	ref := &Refusal{Status: code, Param: f.param, Code: f.code, Detail: clean(detail, 500)}
	if detail == "" {
		ref.msg = fmt.Sprintf("the model service refused the request (HTTP %d)", code)
	} else {
		ref.msg = fmt.Sprintf("the model service refused the request (HTTP %d): %s", code, detail)
	}
	if ref.Overflow() {
		ref.msg += "; the conversation is longer than the model's context window (contextWindow in $KIN_HOME/settings.json says how long it may be)"
	}
	return ref
}

// explainStream explains a failure with no error status: the service was
// not reached, the connection broke, or the stream could not be read.
func explainStream(err error, answered bool) error {
	var se *ssestream.StreamError
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("the model service reported an error mid-answer: %s; nothing was retried", streamErrorMessage(se))
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Errorf("the model service sent an event line longer than %d MiB, more than kin reads; the answer was stopped and nothing was retried", maxSSELine>>20)
	case errors.As(err, &syn):
		return fmt.Errorf("the model service sent an event that is not valid JSON (%v); the answer was stopped and nothing was retried", syn)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL may carry a key
	}
	if !answered {
		return fmt.Errorf("kin could not reach the model service: %v; check OPENAI_BASE_URL (nothing was sent twice)", err)
	}
	return fmt.Errorf("the connection to the model service broke mid-answer: %v; nothing was retried", err)
}

// streamErrorMessage is the message of an error event ({"error": {...}}).
func streamErrorMessage(se *ssestream.StreamError) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(se.Event.Data, &e) == nil {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
			return clean(obj.Message, 500)
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			return clean(s, 500)
		}
	}
	return clean(se.Message, 500)
}
