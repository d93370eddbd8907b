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
	"sync"
	"time"
	"unicode"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/tidwall/gjson"

	"github.com/kin-dev/kin/agent/sendonce"
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
	tail       *tail         // the end of a successful answer's body
	// contentType is a successful answer's Content-Type.
	contentType string
}

func (f *httpFailure) capture(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	resp, err := next(req)
	if resp == nil {
		return resp, err
	}
	f.answered = true
	if resp.StatusCode < 400 {
		f.contentType = resp.Header.Get("Content-Type")
		f.tail = &tail{rc: resp.Body}
		resp.Body = f.tail
		return resp, err
	}
	f.status = resp.StatusCode
	f.retryAfter = retryAfter(resp.Header, time.Now())
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if m, p, c := errorBody(body); m != "" {
		f.message, f.param, f.code = m, p, c
	} else {
		f.body = describeBody(resp.Header.Get("Content-Type"), body)
	}
	return resp, err
}

// accepted reports whether the service answered with a success status:
// the request ran (what it used is billed however the answer ends).
func (f *httpFailure) accepted() bool { return f.answered && f.status == 0 }

// errorBody reads an error body in each form services send: OpenAI's
// {"error":{"message","param","code"}} (OpenRouter's code is a number,
// DashScope adds request_id beside it), the bare {"message","type","code"}
// of vLLM and Mistral (whose message may be an object), FastAPI's
// {"detail": ...}, {"error": "text"} (LM Studio, Ollama, xAI), and any of
// them as the one element of a list (Gemini's OpenAI-compatible endpoint
// answers [{"error":{"code":400,"message":...,"status":...}}]).
func errorBody(body []byte) (message, param, code string) {
	var list []json.RawMessage
	if json.Unmarshal(body, &list) == nil && len(list) > 0 {
		body = list[0]
	}
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
		Param   any             `json:"param"`
		Code    any             `json:"code"`
	}
	if json.Unmarshal(body, &e) != nil {
		return "", "", ""
	}
	var obj struct {
		Message json.RawMessage `json:"message"`
		Param   any             `json:"param"`
		Code    any             `json:"code"`
	}
	switch {
	case json.Unmarshal(e.Error, &obj) == nil && text(obj.Message) != "":
		message, param, code = text(obj.Message), str(obj.Param), str(obj.Code)
	case text(e.Error) != "":
		message = text(e.Error)
	case text(e.Message) != "":
		message, param, code = text(e.Message), str(e.Param), str(e.Code)
	case text(e.Detail) != "":
		message = text(e.Detail)
	}
	return message, param, code
}

// text is a JSON value as a sentence: a string as it is, any other
// non-empty value (an object of details, a list of them) as compact JSON.
func text(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" || string(raw) == "[]" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if raw[0] == '{' || raw[0] == '[' {
		var b bytes.Buffer
		if json.Compact(&b, raw) == nil {
			return b.String()
		}
	}
	return ""
}

// str is a parameter or code named as a string (a number's code is not a
// name kin matches on).
func str(v any) string {
	s, _ := v.(string)
	return s
}

// tailBytes is how much of the end of an answer's body kin keeps.
const tailBytes = 4 << 10

// tail keeps the last bytes of a successful answer's body: a stream that
// ends without finishing may have said why on a line no SSE decoder reads
// (llama.cpp's server writes "error: {...}" before its data: [DONE]). It
// also ends the body with a blank line, so that a last event the server did
// not close with one (codex's own test stream ends so) is read, not dropped.
type tail struct {
	rc  io.ReadCloser
	buf []byte
	// end is what is left to hand out after the body's end (nil: the end
	// was not reached).
	end []byte
}

func (t *tail) Read(p []byte) (int, error) {
	if t.end != nil {
		n := copy(p, t.end)
		if t.end = t.end[n:]; len(t.end) == 0 {
			return n, io.EOF
		}
		return n, nil
	}
	n, err := t.rc.Read(p)
	t.buf = append(t.buf, p[:n]...)
	if over := len(t.buf) - tailBytes; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	if err == io.EOF {
		t.end = []byte("\n\n")
		err = nil
	}
	return n, err
}

func (t *tail) Close() error { return t.rc.Close() }

// errorLine is the message of the last "error:" line of the body's end,
// or "", and the HTTP status the line names as its code (0: none).
func (t *tail) errorLine() (string, int) {
	if t == nil {
		return "", 0
	}
	msg, status := "", 0
	for _, line := range strings.Split(string(t.buf), "\n") {
		v, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "error:")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		status = 0
		if c := gjson.Get(v, "code"); c.Type == gjson.Number && c.Int() >= 400 && c.Int() < 600 && float64(c.Int()) == c.Num {
			status = int(c.Int())
		}
		if m, _, _ := errorBody([]byte(`{"error":` + v + `}`)); m != "" {
			msg = m
		} else if v != "" {
			msg = v
		}
	}
	return clean(msg, 500), status
}

// unfinished is the failure of a stream that ended without its terminal
// event (how, in what): with what the service said, when it said it on a
// line of its own, or what it sent instead of a stream, when heard says no
// event came.
func (f *httpFailure) unfinished(what string, heard bool) error {
	if msg, status := f.tail.errorLine(); msg != "" {
		if !heard && status >= 400 && status < 500 {
			// Nothing streamed before the line: llama-server (before it
			// answered such requests with an error status) refused the
			// request as a whole on that line, its code the status it
			// would have sent ("the request exceeds the available context
			// size", 400). A refusal, so that an overflow compacts.
			return refusal(status, "", "", msg)
		}
		return fmt.Errorf("the model service reported an error mid-answer: %s; nothing was retried", msg)
	}
	if !heard {
		if err := f.notAStream(); err != nil {
			return err
		}
	}
	return fmt.Errorf("the model service ended the answer without %s; nothing was retried", what)
}

// notAStream explains a success status whose body is not an event stream
// (nil when it is one, or is empty): an error body sent with HTTP 200 (LM
// Studio answers a path it does not serve, /v1/responses on a version
// without it or a base URL without /v1, with 200 and {"error":"Unexpected
// endpoint or method. (POST /responses)"}), or a web page (a base URL that
// points at a web UI or a login portal). Said as an answer that "ended
// without finishing", the person would look at the model, not at the URL.
func (f *httpFailure) notAStream() error {
	mt, _, _ := mime.ParseMediaType(f.contentType)
	if f.tail == nil || mt == "text/event-stream" {
		return nil
	}
	body := bytes.TrimSpace(f.tail.buf)
	if len(body) == 0 {
		return nil
	}
	if m, _, _ := errorBody(body); m != "" {
		return fmt.Errorf("the model service answered with an error instead of a stream (HTTP 200): %s; check KIN_MODEL and OPENAI_BASE_URL (nothing was retried)", clean(m, 500))
	}
	what := fmt.Sprintf("%q", clean(string(body), 200))
	if strings.Contains(mt, "html") || body[0] == '<' {
		what = "an HTML page"
		if m := htmlTitle().FindSubmatch(body); m != nil {
			if title := clean(string(m[1]), 80); title != "" {
				what = fmt.Sprintf("an HTML page titled %q", title)
			}
		}
	}
	return fmt.Errorf("the model service answered (HTTP 200) with %s, not an event stream: check OPENAI_BASE_URL, which should name the API (usually ending in /v1); nothing was retried", what)
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

var htmlTitle = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`) })

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
		if m := htmlTitle().FindStringSubmatch(text); m != nil {
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
	return refusal(code, f.param, f.code, detail)
}

// refusal is the Refusal of a request the service refused with status
// (4xx), naming param and code, saying detail.
func refusal(status int, param, code, detail string) *Refusal {
	ref := &Refusal{Status: status, Param: param, Code: code, Detail: clean(detail, 500)}
	if detail == "" {
		ref.msg = fmt.Sprintf("the model service refused the request (HTTP %d)", status)
	} else {
		ref.msg = fmt.Sprintf("the model service refused the request (HTTP %d): %s", status, detail)
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
	if errors.Is(err, sendonce.ErrMayHaveArrived) {
		return errors.New("the connection to the model service failed after kin sent the whole request, so the service may have it; nothing was retried")
	}
	if !answered {
		return fmt.Errorf("kin could not reach the model service: %v; check OPENAI_BASE_URL (nothing was sent twice)", err)
	}
	return fmt.Errorf("the connection to the model service broke mid-answer: %v; nothing was retried", err)
}

// streamErrorMessage is the message of an error event ({"error": {...}},
// in any of the forms errorBody reads).
func streamErrorMessage(se *ssestream.StreamError) string {
	if m, _, _ := errorBody(se.Event.Data); m != "" {
		return clean(m, 500)
	}
	return clean(se.Message, 500)
}
