package modeltest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
)

// post sends a streaming request straight over HTTP, so a test sees
// exactly what the mock sends.
func post(t *testing.T, ctx context.Context, srv *modeltest.Server) (*http.Response, error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL()+"/responses", strings.NewReader(`{"model":"m","input":"hi","stream":true}`))
	return http.DefaultClient.Do(req)
}

func TestStallPoints(t *testing.T) {
	for _, stall := range []modeltest.Stall{modeltest.StallBeforeHeaders, modeltest.StallAfterHeaders, modeltest.StallMidStream} {
		srv := modeltest.New()
		srv.Script(modeltest.Reply{Text: []string{"first", "second"}, Stall: stall})
		ctx, cancel := context.WithCancel(context.Background())
		type answer struct {
			resp *http.Response
			err  error
		}
		got := make(chan answer, 1)
		go func() {
			resp, err := post(t, ctx, srv)
			got <- answer{resp, err}
		}()
		srv.WaitRequests(1, 10*time.Second)
		if stall == modeltest.StallBeforeHeaders {
			cancel() // the only way out: nothing ever comes
			if a := <-got; !errors.Is(a.err, context.Canceled) {
				t.Errorf("before headers: %v", a.err)
			}
			srv.Close()
			continue
		}
		a := <-got
		if a.err != nil || a.resp.StatusCode != 200 {
			t.Fatalf("stall %d: %v", stall, a.err)
		}
		// read what comes until the stall, then give up
		sc := bufio.NewScanner(a.resp.Body)
		var lines []string
		readDone := make(chan struct{})
		go func() {
			defer close(readDone)
			for sc.Scan() {
				lines = append(lines, sc.Text())
				if strings.Contains(sc.Text(), `"delta":"first"`) {
					cancel()
				}
			}
		}()
		if stall == modeltest.StallAfterHeaders {
			cancel()
		}
		<-readDone
		text := strings.Join(lines, "\n")
		switch stall {
		case modeltest.StallAfterHeaders:
			if text != "" {
				t.Errorf("after headers: body %q", text)
			}
		case modeltest.StallMidStream:
			if !strings.Contains(text, `"delta":"first"`) || strings.Contains(text, "second") {
				t.Errorf("mid-stream: body %q", text)
			}
		}
		srv.Close()
	}
}

func TestErrorBodyAndRetryAfter(t *testing.T) {
	srv := modeltest.New()
	t.Cleanup(srv.Close)
	srv.Script(modeltest.Reply{HTTPStatus: 502, ErrorBody: "<html>bad gateway</html>", ErrorContentType: "text/html", RetryAfter: 1500 * time.Millisecond})
	resp, err := post(t, context.Background(), srv)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 502 || string(body) != "<html>bad gateway</html>" || resp.Header.Get("Content-Type") != "text/html" {
		t.Errorf("got %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if resp.Header.Get("Retry-After") != "2" || resp.Header.Get("Retry-After-Ms") != "1500" {
		t.Errorf("retry headers %v", resp.Header)
	}
}

func TestBadJSONAndLongLine(t *testing.T) {
	srv := modeltest.New()
	t.Cleanup(srv.Close)
	srv.Script(modeltest.Reply{Text: []string{"a", "b"}, BadJSON: true, LongLine: 1 << 20})
	resp, err := post(t, context.Background(), srv)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 4<<20)
	bad, long, completed := 0, 0, false
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		switch {
		case len(sc.Text()) == 1<<20:
			long++
		case !json.Valid([]byte(data)):
			bad++
		case strings.Contains(data, `"response.completed"`):
			completed = true
		}
	}
	if bad != 1 || long != 1 || !completed {
		t.Errorf("bad %d long %d completed %v (%v)", bad, long, completed, sc.Err())
	}
}
