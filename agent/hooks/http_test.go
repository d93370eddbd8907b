package hooks_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/hooks"
	"github.com/kin-dev/kin/agent/sendonce/resettest"
)

// endpoint is an http hook's server: it answers status and body, and
// keeps what it received.
type endpoint struct {
	*httptest.Server
	mu      sync.Mutex
	got     []*http.Request
	bodies  []string
	status  int
	body    string
	release chan struct{} // non-nil: stall until closed or the client gives up
}

func newEndpoint(t *testing.T, status int, body string) *endpoint {
	e := &endpoint{status: status, body: body}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.got, e.bodies = append(e.got, r), append(e.bodies, string(b))
		release, status, body := e.release, e.status, e.body
		e.mu.Unlock()
		if release != nil {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(e.Close)
	return e
}

// answer sets what the endpoint answers from now on.
func (e *endpoint) answer(status int, body string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.status, e.body = status, body
}

// received are the requests and bodies so far.
func (e *endpoint) received() ([]*http.Request, []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*http.Request(nil), e.got...), append([]string(nil), e.bodies...)
}

func httpHook(ev hooks.Event, url string) hooks.Hook {
	return hooks.Hook{Event: ev, Type: hooks.TypeHTTP, URL: url, Timeout: 5 * time.Second, Owner: hooks.Person}
}

var bashIn = hooks.Input{SessionID: "s1", ToolName: "Bash", KinToolName: "bash", ToolInput: json.RawMessage(`{"command":"rm -rf /"}`)}

// A 2xx answer is read as a command's stdout with exit code 0: its
// decision blocks; the request is a POST of the hook's input JSON.
func TestHTTPHookDecisionBlocks(t *testing.T) {
	_, _, r := setup(t)
	e := newEndpoint(t, http.StatusOK, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no rm here"}}`)
	res := r.Run(context.Background(), httpHook(hooks.PreToolUse, e.URL+"/check"), bashIn)
	if !res.Block || res.Decision != "deny" || res.Reason != "no rm here" || res.Failure != "" {
		t.Fatalf("%+v", res)
	}
	got, bodies := e.received()
	req := got[0]
	if req.Method != http.MethodPost || req.URL.Path != "/check" || req.Header.Get("Content-Type") != "application/json" {
		t.Errorf("request %s %s %q", req.Method, req.URL.Path, req.Header.Get("Content-Type"))
	}
	var sent map[string]any
	if err := json.Unmarshal([]byte(bodies[0]), &sent); err != nil || sent["hook_event_name"] != "PreToolUse" || sent["tool_name"] != "Bash" ||
		sent["session_id"] != "s1" || sent["tool_input"].(map[string]any)["command"] != "rm -rf /" {
		t.Errorf("body %s %v", bodies[0], err)
	}
	// the same parser: decision "block" at PostToolUse, plain text as
	// context at UserPromptSubmit, a project's allow ignored
	e.answer(http.StatusOK, `{"decision":"block","reason":"tests failed"}`)
	if res := r.Run(context.Background(), httpHook(hooks.PostToolUse, e.URL), bashIn); !res.Block || res.Reason != "tests failed" {
		t.Errorf("PostToolUse block: %+v", res)
	}
	e.answer(http.StatusOK, "ticket KIN-7")
	if res := r.Run(context.Background(), httpHook(hooks.UserPromptSubmit, e.URL), hooks.Input{Prompt: "hi"}); res.Context != "ticket KIN-7" {
		t.Errorf("UserPromptSubmit context: %+v", res)
	}
	e.answer(http.StatusOK, `{"hookSpecificOutput":{"permissionDecision":"allow"}}`)
	h := httpHook(hooks.PreToolUse, e.URL)
	h.Owner = hooks.Project
	if res := r.Run(context.Background(), h, bashIn); res.Decision != "" || !strings.Contains(res.Ignored, "never allow") {
		t.Errorf("a project's allow: %+v", res)
	}
	e.answer(http.StatusOK, `{"decision":`)
	if res := r.Run(context.Background(), httpHook(hooks.PreToolUse, e.URL), bashIn); res.Block || !strings.Contains(res.Failure, "not JSON") {
		t.Errorf("a cut answer: %+v", res)
	}
}

// An empty 2xx answer does nothing; any other status fails, never blocks,
// whatever its body says.
func TestHTTPHookStatuses(t *testing.T) {
	_, _, r := setup(t)
	e := newEndpoint(t, http.StatusNoContent, "")
	if res := r.Run(context.Background(), httpHook(hooks.PreToolUse, e.URL), bashIn); res.Block || res.Failure != "" || res.Decision != "" {
		t.Errorf("204: %+v", res)
	}
	e.answer(http.StatusOK, "")
	if res := r.Run(context.Background(), httpHook(hooks.Stop, e.URL), hooks.Input{}); res.Block || res.Failure != "" {
		t.Errorf("200 empty: %+v", res)
	}
	e.answer(http.StatusInternalServerError, `{"decision":"block","reason":"boom"}`)
	res := r.Run(context.Background(), httpHook(hooks.PreToolUse, e.URL), bashIn)
	if res.Block || res.Decision != "" || !strings.Contains(res.Failure, "answered HTTP 500") || !strings.Contains(res.Failure, "blocks nothing") {
		t.Errorf("500: %+v", res)
	}
	e.answer(http.StatusForbidden, `{"decision":"block","reason":"boom"}`)
	if res := r.Run(context.Background(), httpHook(hooks.Stop, e.URL), hooks.Input{}); res.Block || !strings.Contains(res.Failure, "HTTP 403") {
		t.Errorf("403: %+v", res)
	}
}

// A redirect is a failure: the hook's input never reaches where it points.
func TestHTTPHookDoesNotFollowRedirects(t *testing.T) {
	_, _, r := setup(t)
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = io.WriteString(w, `{"decision":"block","reason":"from the redirect"}`)
	}))
	defer target.Close()
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		from := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			http.Redirect(w, req, target.URL+"/collect", code)
		}))
		res := r.Run(context.Background(), httpHook(hooks.PreToolUse, from.URL), bashIn)
		from.Close()
		if res.Block || !strings.Contains(res.Failure, "redirect") {
			t.Errorf("%d: %+v", code, res)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the redirect's target received %d requests", n)
	}
}

// Header values expand only the variables allowedEnvVars lists, from the
// command environment: never a model key, even when listed; a name not
// listed is empty. Header values appear in no failure.
func TestHTTPHookHeaders(t *testing.T) {
	kinHome, _, r := setup(t)
	// a model of the person's settings whose key is in MY_SERVICE_KEY
	write(t, filepath.Join(kinHome, "settings.json"), `{"models":[{"model":"m","baseUrl":"https://svc.example/v1","apiKeyEnv":"MY_SERVICE_KEY"}]}`, 0o600)
	r.Env = append(r.Env, "HOOK_TOKEN=tok-123", "OTHER_SECRET=other-456", "MY_SERVICE_KEY=sk-CANARY-service")
	e := newEndpoint(t, http.StatusOK, "")
	h := httpHook(hooks.PreToolUse, e.URL)
	h.Headers = map[string]string{
		"Authorization": "Bearer $HOOK_TOKEN",
		"X-Braced":      "<${HOOK_TOKEN}>",
		"X-Other":       "[$OTHER_SECRET]",
		"X-Model-Key":   "$OPENAI_API_KEY",
		"X-Service-Key": "${MY_SERVICE_KEY}",
		"X-Home":        "$HOME",
	}
	h.AllowedEnvVars = []string{"HOOK_TOKEN", "OPENAI_API_KEY", "MY_SERVICE_KEY"}
	if res := r.Run(context.Background(), h, bashIn); res.Failure != "" {
		t.Fatalf("%+v", res)
	}
	reqs, _ := e.received()
	got := reqs[0].Header
	want := map[string]string{"Authorization": "Bearer tok-123", "X-Braced": "<tok-123>", "X-Other": "[]", "X-Model-Key": "", "X-Service-Key": "", "X-Home": ""}
	for k, v := range want {
		if got.Get(k) != v {
			t.Errorf("header %s: %q, want %q", k, got.Get(k), v)
		}
	}
	for k, vs := range got {
		if strings.Contains(strings.Join(vs, ","), "CANARY") {
			t.Errorf("header %s carries a model key", k)
		}
	}
	// a value that would start another header is not sent, and not shown
	r.Env = append(r.Env, "EVIL=x\r\nX-Injected: 1")
	h.Headers = map[string]string{"Authorization": "Bearer $EVIL"}
	h.AllowedEnvVars = []string{"EVIL"}
	res := r.Run(context.Background(), h, bashIn)
	if now, _ := e.received(); !strings.Contains(res.Failure, "Authorization") || strings.Contains(res.Failure, "Injected") || len(now) != len(reqs) {
		t.Errorf("a header value with a line break: %+v (sent %d)", res, len(now)-len(reqs))
	}
	// an endpoint that cannot be reached: the failure masks the URL's
	// query and says no header value
	h = httpHook(hooks.PreToolUse, "http://127.0.0.1:1/hook?token=QSECRET")
	h.Headers, h.AllowedEnvVars = map[string]string{"Authorization": "Bearer $HOOK_TOKEN"}, []string{"HOOK_TOKEN"}
	res = r.Run(context.Background(), h, bashIn)
	if res.Failure == "" || res.Block || strings.Contains(res.Failure, "QSECRET") || strings.Contains(res.Failure, "tok-123") {
		t.Errorf("unreachable: %+v", res)
	}
	if d := h.Display(); strings.Contains(d, "QSECRET") || strings.Contains(d, "tok-123") {
		t.Errorf("display %q", d)
	}
}

// An endpoint that stalls is given up at the hook's timeout: a failure,
// no block.
func TestHTTPHookTimesOut(t *testing.T) {
	_, _, r := setup(t)
	e := newEndpoint(t, http.StatusOK, `{"decision":"block","reason":"late"}`)
	release := make(chan struct{})
	e.mu.Lock()
	e.release = release
	e.mu.Unlock()
	defer close(release)
	h := httpHook(hooks.PreToolUse, e.URL+"/?key=QSECRET")
	h.Timeout = 300 * time.Millisecond
	start := time.Now()
	res := r.Run(context.Background(), h, bashIn)
	if res.Block || !strings.Contains(res.Failure, "did not answer within 300ms") || strings.Contains(res.Failure, "QSECRET") {
		t.Errorf("%+v", res)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	// the turn's end stops it too, saying so
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	h.Timeout = 10 * time.Second
	if res := r.Run(ctx, h, bashIn); res.Block || !strings.Contains(res.Failure, "cancelled") {
		t.Errorf("cancelled: %+v", res)
	}
}

// An answer past the output bound is cut there, as a command's stdout is:
// an endless body does not hold the hook until its timeout.
func TestHTTPHookAnswerIsBounded(t *testing.T) {
	_, _, r := setup(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.WriteString(w, `{"decision":"block","reason":"`)
		chunk := strings.Repeat("x", 4096)
		for req.Context().Err() == nil {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	h := httpHook(hooks.PreToolUse, srv.URL)
	start := time.Now()
	res := r.Run(context.Background(), h, bashIn)
	if res.Block || !strings.Contains(res.Failure, "not JSON") {
		t.Errorf("%+v", res)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("an endless answer took %v (the timeout is %v)", d, h.Timeout)
	}
}

// Attack: the hook's server (or a proxy in front of it) takes the POST
// whole and resets its HTTP/2 stream with PROTOCOL_ERROR. Go's HTTP/2
// transport would send the POST again, and again, until the hook's
// timeout: each one more event at the person's server. It is sent once,
// and the hook fails (blocking nothing, as any failed http hook).
func TestHTTPHookIsPostedOnceOnAResetStream(t *testing.T) {
	s := resettest.New(t)
	defer hooks.SetTransport(resettest.Transport())()
	h := httpHook(hooks.PreToolUse, s.URL()+"/hook")
	h.Timeout = 2 * time.Second
	res := hooks.Runner{}.Run(context.Background(), h, bashIn)
	if res.Failure == "" || res.Block {
		t.Errorf("%+v", res)
	}
	if n := s.Arrived(); n != 1 {
		t.Errorf("the hook's POST arrived %d times", n)
	}
}
