package rpctest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/rpc"
)

// Raw is an editor that writes bytes as they are, to test framing that a
// well-behaved jsonrpc2 connection never produces, and reads kin's frames
// one by one. It serves on net.Pipe like Editor.
type Raw struct {
	t   testing.TB
	w   net.Conn
	r   *bufio.Reader
	out chan Answer
	// Done is closed when Serve returned.
	Done chan struct{}
}

// Answer is one message kin wrote, decoded, with its id as written.
type Answer struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *jsonrpc2.Error `json:"error"`
	Params json.RawMessage `json:"params"`
}

// StartRaw serves opts on one end of a pipe and returns the other end.
func StartRaw(t testing.TB, opts rpc.Options) *Raw {
	t.Helper()
	a, b := net.Pipe()
	r := &Raw{t: t, w: b, r: bufio.NewReader(b), out: make(chan Answer, 64), Done: make(chan struct{})}
	go func() {
		rpc.Serve(context.Background(), a, opts)
		close(r.Done)
	}()
	go func() {
		defer close(r.out)
		for {
			var f Answer
			if err := (jsonrpc2.VSCodeObjectCodec{}).ReadObject(r.r, &f); err != nil {
				return
			}
			r.out <- f
		}
	}()
	t.Cleanup(func() {
		b.Close()
		select {
		case <-r.Done:
		case <-time.After(Timeout):
			t.Errorf("server did not stop after the editor went away")
		}
	})
	return r
}

// Write sends s as it is; it fails the test when kin does not read it.
func (r *Raw) Write(s string) {
	r.t.Helper()
	r.WriteBytes([]byte(s))
}

// WriteBytes is Write for bytes.
func (r *Raw) WriteBytes(p []byte) {
	r.t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := r.w.Write(p)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			r.t.Fatalf("writing to kin: %v", err)
		}
	case <-time.After(Timeout):
		r.t.Fatal("kin stopped reading")
	}
}

// WriteUntilClosed is Write for bytes kin may stop reading by closing the
// connection: a write kin's close ended is not a failure.
func (r *Raw) WriteUntilClosed(s string) {
	r.t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := r.w.Write([]byte(s))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, io.ErrClosedPipe) {
			r.t.Fatalf("writing to kin: %v", err)
		}
	case <-r.Done:
	case <-time.After(Timeout):
		r.t.Fatal("kin stopped reading")
	}
}

// Send writes v as one well-formed frame.
func (r *Raw) Send(v any) {
	r.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		r.t.Fatal(err)
	}
	r.Write(Framed(string(b)))
}

// Framed puts a body in a frame with its true Content-Length.
func Framed(body string) string {
	return "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

// Next returns kin's next frame, skipping notifications.
func (r *Raw) Next() Answer {
	r.t.Helper()
	return r.next("answer", func(f Answer) bool { return f.Method == "" })
}

// Notification returns kin's next notification of method, skipping every
// other frame.
func (r *Raw) Notification(method string) Answer {
	r.t.Helper()
	return r.next(method, func(f Answer) bool { return f.Method == method })
}

// next returns kin's next frame that want takes, skipping the others; it
// fails the test, naming what, after Timeout.
func (r *Raw) next(what string, want func(Answer) bool) Answer {
	r.t.Helper()
	for {
		select {
		case f, ok := <-r.out:
			if !ok {
				r.t.Fatal("kin closed the connection")
			}
			if want(f) {
				return f
			}
		case <-time.After(Timeout):
			r.t.Fatalf("no %s from kin", what)
		}
	}
}
