package oauth

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/mcp/config"
)

func TestCallbackIgnoresStrayAnswers(t *testing.T) {
	cb, err := listen("api", "127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.close()
	cb.expect("good-state")
	get := func(q string) int {
		resp, err := http.Get(cb.redirect + "?" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := get("code=c1&state=forged"); got != http.StatusBadRequest {
		t.Errorf("forged state: %d", got)
	}
	if r, err := http.Get(strings.Replace(cb.redirect, "/callback", "/other", 1)); err != nil || r.StatusCode != http.StatusNotFound {
		t.Errorf("other path: %v %v", r, err)
	}
	select {
	case r := <-cb.results:
		t.Fatalf("a stray answer ended the sign-in: %+v", r)
	default:
	}
	if got := get("code=c2&state=good-state&iss=https%3A%2F%2Fas.example"); got != http.StatusOK {
		t.Errorf("good answer: %d", got)
	}
	r := <-cb.results
	if r.err != nil || r.code != "c2" || r.iss != "https://as.example" {
		t.Errorf("result = %+v", r)
	}
	if got := get("code=c3&state=good-state"); got != http.StatusOK {
		t.Errorf("replay: %d", got)
	}
	select {
	case r := <-cb.results:
		t.Errorf("a second answer was taken: %+v", r)
	default:
	}
}

func TestCallbackRefusesOtherHosts(t *testing.T) {
	for _, h := range []string{"0.0.0.0", "example.com", ""} {
		if _, err := listen("api", h, 8765); err == nil {
			t.Errorf("listen on %q accepted", h)
		}
	}
}

func TestClientAuthTransportMovesCredentials(t *testing.T) {
	var got *http.Request
	var form url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		_ = r.ParseForm()
		form = r.PostForm
	}))
	defer srv.Close()
	send := func(method string) {
		c := withClientAuth(http.DefaultClient, srv.URL+"/token", method, "id 1", "s3cret")
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/token", strings.NewReader("grant_type=authorization_code&code=x&client_secret=wrong"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth("someone", "")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	send(methodNone)
	if got.Header.Get("Authorization") != "" || form.Get("client_id") != "id 1" || form.Has("client_secret") || form.Get("code") != "x" {
		t.Errorf("none: auth %q form %v", got.Header.Get("Authorization"), form)
	}
	send(methodPost)
	if got.Header.Get("Authorization") != "" || form.Get("client_id") != "id 1" || form.Get("client_secret") != "s3cret" {
		t.Errorf("post: form %v", form)
	}
	send(methodBasic)
	id, secret, ok := got.BasicAuth()
	if !ok || id != "id+1" || secret != "s3cret" || form.Has("client_secret") || form.Has("client_id") {
		t.Errorf("basic: %q %q %v form %v", id, secret, ok, form)
	}
}

func TestSignInDeadlineEndsBeforeTheCaller(t *testing.T) {
	now := time.Now()
	if d := signInDeadline(context.Background(), now); !d.Equal(now.Add(SignInTimeout)) {
		t.Errorf("no caller deadline: %v", d.Sub(now))
	}
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(10*time.Second))
	defer cancel()
	if d := signInDeadline(ctx, now); d.Sub(now) != 9*time.Second {
		t.Errorf("10 s caller: %v", d.Sub(now))
	}
	ctx2, cancel2 := context.WithDeadline(context.Background(), now.Add(2*time.Second))
	defer cancel2()
	if d := signInDeadline(ctx2, now); d.Sub(now) != 1800*time.Millisecond {
		t.Errorf("2 s caller: %v", d.Sub(now))
	}
}

func TestStoreNarrowsPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), DirName)
	st := &store{dir: dir}
	if err := st.update("k", func(r *record) error {
		r.Token = &tokenRecord{AccessToken: "at-canary", ClientID: "c"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	p := st.path("k")
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := st.read("k")
	if err != nil || r.Token == nil || r.Token.AccessToken != "at-canary" {
		t.Fatalf("read = %+v, %v", r, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode after read = %v", fi.Mode().Perm())
	}
	if err := st.update("k", func(*record) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode after write = %v", fi.Mode().Perm())
	}
	if s := fmt.Sprintf("%v %+v %v", r, r, r.Token); strings.Contains(s, "at-canary") {
		t.Errorf("a token shows in %q", s)
	}
}

func TestRefreshErrorHidesTheBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":"invalid_grant","leak":"rt-canary-value"}`)
	}))
	defer srv.Close()
	m := New(Options{KinHome: t.TempDir()})
	ep := &endpoint{key: "k"}
	tr := &tokenRecord{AccessToken: "at", RefreshToken: "rt-canary-value", ClientID: "c", TokenURL: srv.URL, Expiry: time.Now().Add(-time.Hour)}
	if err := m.store.update(ep.key, func(r *record) error { r.Token = tr; return nil }); err != nil {
		t.Fatal(err)
	}
	ps := m.newSource(ep, testServer(), tr, "")
	ep.ts = ps
	_, err := ps.Token()
	if err == nil || strings.Contains(err.Error(), "canary") || !strings.Contains(err.Error(), "invalid_grant") {
		t.Errorf("err = %v", err)
	}
	if ep.ts != nil {
		t.Error("a dead refresh token was kept")
	}
}

func testServer() config.Server {
	return config.Server{Name: "api", Transport: config.TransportHTTP, URL: "https://mcp.example.com/mcp", Auth: "oauth"}
}
