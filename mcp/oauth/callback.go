package oauth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/kin-dev/kin/agent/visible"
)

// callback is the one-shot loopback server the browser returns to. It
// accepts exactly one answer carrying the expected state on GET /callback;
// anything else is answered and ignored. It listens on 127.0.0.1, or on
// 127.0.0.1 and ::1 for "localhost", never on another interface.
type callback struct {
	server   string // the MCP server's name, for the page
	redirect string
	port     int
	srv      *http.Server
	results  chan callbackResult // capacity 1: the one answer

	// mu guards state and done.
	mu    sync.Mutex
	state string
	done  bool
}

type callbackResult struct {
	code, state, iss string
	err              error
}

// listen binds the callback. Port 0 picks an ephemeral port (127.0.0.1
// only). A busy port is an Error naming the fix.
func listen(server, host string, port int) (*callback, error) {
	var lns []net.Listener
	bind := func(network, ip string) error {
		l, err := net.Listen(network, net.JoinHostPort(ip, strconv.Itoa(port)))
		if err != nil {
			return err
		}
		lns = append(lns, l)
		if port == 0 {
			port = l.Addr().(*net.TCPAddr).Port
		}
		return nil
	}
	closeAll := func() {
		for _, l := range lns {
			l.Close()
		}
	}
	switch host {
	case "127.0.0.1":
		if err := bind("tcp4", "127.0.0.1"); err != nil {
			return nil, bindError(port, err)
		}
	case "localhost":
		if port == 0 {
			return nil, &Error{Kind: KindConfig, Msg: `oauth.callbackHost "localhost" requires oauth.callbackPort`}
		}
		if err := bind("tcp4", "127.0.0.1"); err != nil {
			return nil, bindError(port, err)
		}
		// A browser may resolve localhost to ::1. A machine without IPv6
		// loopback keeps the IPv4 listener alone; a busy ::1 port is an error.
		if err := bind("tcp6", "::1"); err != nil && errors.Is(err, syscall.EADDRINUSE) {
			closeAll()
			return nil, bindError(port, err)
		}
	default:
		return nil, &Error{Kind: KindConfig, Msg: "the callback host must be 127.0.0.1 or localhost"}
	}
	cb := &callback{
		server:   server,
		redirect: redirectURI(host, port),
		port:     port,
		results:  make(chan callbackResult, 1),
	}
	cb.srv = &http.Server{Handler: cb, ReadHeaderTimeout: 10 * time.Second}
	for _, l := range lns {
		go func() { _ = cb.srv.Serve(l) }()
	}
	return cb, nil
}

func bindError(port int, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return &Error{Kind: KindCallback, Msg: fmt.Sprintf(
			"callback port %d is in use: free it, or change callbackPort and the registered redirect URI together", port)}
	}
	return &Error{Kind: KindCallback, Msg: fmt.Sprintf("could not listen for the sign-in callback on port %d: %v", port, safeCause(err))}
}

// expect sets the state the answer must carry.
func (cb *callback) expect(state string) {
	cb.mu.Lock()
	cb.state = state
	cb.mu.Unlock()
}

// close stops the server, letting a page being written finish first.
func (cb *callback) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := cb.srv.Shutdown(ctx); err != nil {
		cb.srv.Close()
	}
}

func (cb *callback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/callback" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	cb.mu.Lock()
	expected, done := cb.state, cb.done
	ok := !done && expected != "" && q.Get("state") == expected
	if ok {
		cb.done = true
	}
	cb.mu.Unlock()
	switch {
	case done:
		page(w, http.StatusOK, "Sign-in already finished", "kin already received this sign-in. You can close this tab.")
		return
	case !ok:
		// A stray or forged request: it cannot end the sign-in.
		page(w, http.StatusBadRequest, "Unexpected sign-in response", "kin did not expect this response and ignored it.")
		return
	}
	var res callbackResult
	if e := q.Get("error"); e != "" {
		msg := fmt.Sprintf("the authorization server ended the sign-in with %s", strconv.Quote(visible.Cut(printable(e), 60)))
		if d := q.Get("error_description"); d != "" {
			msg += ": " + visible.Cut(printable(d), 200)
		}
		page(w, http.StatusOK, "Sign-in failed", "The sign-in to "+cb.server+" did not complete ("+visible.Cut(printable(e), 60)+"). You can close this tab and return to kin.")
		res.err = &Error{Kind: KindDenied, Msg: msg}
	} else if code := q.Get("code"); code == "" {
		page(w, http.StatusBadRequest, "Sign-in failed", "The response carried no authorization code. You can close this tab and return to kin.")
		res.err = &Error{Kind: KindCallback, Msg: "the sign-in callback carried no authorization code"}
	} else {
		page(w, http.StatusOK, "Signed in", "kin is now signed in to "+cb.server+". You can close this tab and return to kin.")
		res = callbackResult{code: code, state: q.Get("state"), iss: q.Get("iss")}
	}
	cb.results <- res
}

func page(w http.ResponseWriter, status int, title, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><html><head><meta charset=\"utf-8\"><title>%s</title></head><body><h1>%s</h1><p>%s</p></body></html>\n",
		html.EscapeString(title), html.EscapeString(title), html.EscapeString(body))
}
