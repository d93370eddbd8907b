package rpc_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

func rawEditor(t *testing.T) *rpctest.Raw {
	e := newEnv(t)
	r := rpctest.StartRaw(t, e.Options())
	r.Send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{}})
	if f := r.Next(); f.Error != nil {
		t.Fatalf("initialize: %v", f.Error)
	}
	return r
}

func listReq(id any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "session/list", "params": map[string]any{}})
	return string(b)
}

// answered reads kin's next frame and checks it answers id (as written).
func answered(t *testing.T, r *rpctest.Raw, id string) {
	t.Helper()
	f := r.Next()
	if string(f.ID) != id || f.Error != nil {
		t.Fatalf("want the answer to id %s, got id %s error %v", id, f.ID, f.Error)
	}
}

// refused reads kin's next frame and checks it is an error for id.
func refused(t *testing.T, r *rpctest.Raw, id string, code int64) *rpctest.Frame {
	t.Helper()
	f := r.Next()
	if string(f.ID) != id || f.Error == nil || f.Error.Code != code {
		t.Fatalf("want error %d for id %s, got id %s error %v", code, id, f.ID, f.Error)
	}
	return &f
}

// After a header kin cannot read a length from, the body that follows has
// no known end; kin answers once and starts again at the next frame.
func TestBadHeaderThenGoodRequestIsAnswered(t *testing.T) {
	body := listReq(99) // what the editor meant to send: never run
	for name, header := range map[string]string{
		"no colon":    "Content-Length 52\r\n",
		"misspelt":    "Content-Lenght: 52\r\n",
		"negative":    "Content-Length: -52\r\n",
		"overflowing": "Content-Length: 99999999999999999999999\r\n",
		"no length":   "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			r := rawEditor(t)
			r.Write(header + "\r\n" + body)
			r.Write(rpctest.Framed(listReq(2)))
			refused(t, r, "null", rpc.CodeInvalidRequest)
			answered(t, r, "2")
			r.Write(rpctest.Framed(listReq(3)))
			answered(t, r, "3")
		})
	}
}

// A Content-Length that is wrong either way costs only the frame it is on.
func TestWrongContentLengthThenGoodFrames(t *testing.T) {
	t.Run("too short", func(t *testing.T) {
		r := rawEditor(t)
		bad := listReq(5)
		r.Write(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(bad)-10, bad))
		r.Write(rpctest.Framed(listReq(6)))
		refused(t, r, "5", rpc.CodeParseError) // the id was read before the cut
		answered(t, r, "6")
		r.Write(rpctest.Framed(listReq(7)))
		answered(t, r, "7")
	})
	t.Run("too long", func(t *testing.T) {
		r := rawEditor(t)
		bad := listReq(5)
		r.Write(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(bad)+40, bad))
		r.Write(rpctest.Framed(listReq(6))) // not swallowed by the frame before
		f := refused(t, r, "5", rpc.CodeInvalidRequest)
		if !strings.Contains(f.Error.Message, "Content-Length") {
			t.Errorf("message %q does not name the problem", f.Error.Message)
		}
		answered(t, r, "6")
		r.Write(rpctest.Framed(listReq(7)))
		answered(t, r, "7")
	})
}

// Every id JSON-RPC allows comes back as the editor wrote it, including
// ones jsonrpc2 cannot hold (it answered "id":-1 as 18446744073709551615).
func TestRequestIDsComeBackAsWritten(t *testing.T) {
	r := rawEditor(t)
	for _, id := range []string{`-1`, `0`, `7`, `1.5`, `1e3`, `-0`, `18446744073709551615`, `99999999999999999999999`,
		`"abc"`, `""`, `"\u0000kin-id:-1"`} {
		r.Write(rpctest.Framed(`{"jsonrpc":"2.0","id":` + id + `,"method":"session/list","params":{}}`))
		answered(t, r, id)
		r.Write(rpctest.Framed(`{"jsonrpc":"2.0","id":` + id + `,"method":"no/such/method"}`))
		refused(t, r, id, rpc.CodeMethodNotFound)
	}
}

// A frame over the size cap is skipped as it streams past and answered with
// its own id.
func TestOversizeFrameIsAnsweredWithItsID(t *testing.T) {
	r := rawEditor(t)
	head := `{"jsonrpc":"2.0","id":-1,"method":"session/new","params":{"title":"`
	tail := `"}}`
	n := rpc.MaxFrame + 1
	r.Write(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", n, head))
	r.Write(strings.Repeat("a", n-len(head)-len(tail)) + tail)
	f := refused(t, r, "-1", rpc.CodeInvalidRequest)
	if !strings.Contains(f.Error.Message, "limit") {
		t.Errorf("message %q", f.Error.Message)
	}
	r.Write(rpctest.Framed(listReq(8)))
	answered(t, r, "8")
}

// An over-long header line is refused without being kept, and the next
// frame is read: reading a 64 MiB line allocates next to nothing (kin used
// to keep the whole line, and grew by its size).
func TestLongHeaderLineThenGoodFrame(t *testing.T) {
	r := rawEditor(t)
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 64 {
		r.WriteBytes(chunk)
	}
	r.Write("\r\n\r\n")
	r.Write(rpctest.Framed(listReq(9)))
	refused(t, r, "null", rpc.CodeInvalidRequest)
	answered(t, r, "9")
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("reading one header line allocated %d MiB", grew>>20)
	}
}
