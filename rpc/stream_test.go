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

// expect reads the next len(want) answers, in whatever order kin wrote them
// (JSON-RPC allows any), and checks each: want maps an id, as the editor
// wrote it ("null" for none), to the error code it must carry (0: a result).
func expect(t *testing.T, r *rpctest.Raw, want map[string]int64) map[string]rpctest.Answer {
	t.Helper()
	got := map[string]rpctest.Answer{}
	for range want {
		f := r.Next()
		got[string(f.ID)] = f
	}
	for id, code := range want {
		f, ok := got[id]
		switch {
		case !ok:
			t.Fatalf("no answer for id %s (got %v)", id, got)
		case code == 0 && f.Error != nil:
			t.Fatalf("id %s: error %v, want a result", id, f.Error)
		case code != 0 && (f.Error == nil || f.Error.Code != code):
			t.Fatalf("id %s: %v, want error %d", id, f.Error, code)
		}
	}
	return got
}

func answered(t *testing.T, r *rpctest.Raw, id string) {
	t.Helper()
	expect(t, r, map[string]int64{id: 0})
}

func refused(t *testing.T, r *rpctest.Raw, id string, code int64) rpctest.Answer {
	t.Helper()
	return expect(t, r, map[string]int64{id: code})[id]
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
			expect(t, r, map[string]int64{"null": rpc.CodeInvalidRequest, "2": 0})
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
		expect(t, r, map[string]int64{"5": rpc.CodeParseError, "6": 0}) // the id was read before the cut
		r.Write(rpctest.Framed(listReq(7)))
		answered(t, r, "7")
	})
	t.Run("too long", func(t *testing.T) {
		r := rawEditor(t)
		bad := listReq(5)
		r.Write(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(bad)+40, bad))
		r.Write(rpctest.Framed(listReq(6))) // not swallowed by the frame before
		got := expect(t, r, map[string]int64{"5": rpc.CodeInvalidRequest, "6": 0})
		if msg := got["5"].Error.Message; !strings.Contains(msg, "Content-Length") {
			t.Errorf("message %q does not name the problem", msg)
		}
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
	expect(t, r, map[string]int64{"null": rpc.CodeInvalidRequest, "9": 0})
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("reading one header line allocated %d MiB", grew>>20)
	}
}

// A Content-Length no frame can have (over the cap, past what an int64
// holds) is answered at once, from what was sent, never after waiting for
// a body that will not come; the connection keeps serving. Nothing more is
// written before the answer is read.
func TestImpossibleContentLengthIsAnsweredAtOnce(t *testing.T) {
	for name, tc := range map[string]struct {
		length string
		id     string // the id the answer carries
	}{
		"10 GB":          {"10737418240", "5"},
		"over the cap":   {fmt.Sprint(rpc.MaxFrame + 1), "5"},
		"int64 max":      {"9223372036854775807", "5"},
		"2^64-1":         {"18446744073709551615", "null"}, // no length at all: the body is not read
		"10 GB, no id":   {"10737418240", "null"},
		"10 GB, no JSON": {"10737418240", "null"},
	} {
		t.Run(name, func(t *testing.T) {
			r := rawEditor(t)
			body := listReq(5)
			switch name {
			case "10 GB, no id":
				body = `{"jsonrpc":"2.0","method":"session/list","params":{}}`
			case "10 GB, no JSON":
				body = `hello`
			}
			r.Write("Content-Length: " + tc.length + "\r\n\r\n" + body)
			f := refused(t, r, tc.id, rpc.CodeInvalidRequest)
			if !strings.Contains(f.Error.Message, "Content-Length") && !strings.Contains(f.Error.Message, "limit") {
				t.Errorf("message %q does not name the problem", f.Error.Message)
			}
			r.Write(rpctest.Framed(listReq(6)))
			answered(t, r, "6")
			r.Write(rpctest.Framed(listReq(7)))
			answered(t, r, "7")
		})
	}
}

// A key written with escapes is the key it spells ("\u0069d" is "id", and
// jsonrpc2 reads it so): kin's stream took no id from it, so an id jsonrpc2
// cannot hold was not carried as an alias, and "id":-1 spelt so was
// answered as 18446744073709551615 (the editor waits for -1 forever).
func TestAnEscapedIDKeyIsAnIDLikeAnyOther(t *testing.T) {
	r := rawEditor(t)
	for _, id := range []string{`-1`, `1.5`, `"abc"`} {
		r.Write(rpctest.Framed(`{"jsonrpc":"2.0","\u0069d":` + id + `,"method":"session/list","params":{}}`))
		answered(t, r, id)
		r.Write(rpctest.Framed(`{"jsonrpc":"2.0","\u0069\u0064":` + id + `,"method":"no/such/method"}`))
		refused(t, r, id, rpc.CodeMethodNotFound)
	}
}

// A frame kin cannot read that is an answer to one of kin's own requests
// (a workspace/applyEdit's, say: it has an id and no method) is refused
// with "id":null. Its id is from kin's numbering, not the editor's, and
// kin answered with it: the editor took the refusal for the answer to its
// own request of that number (here a session/list still to be answered
// would have got it), and JSON-RPC answers no response.
func TestABadAnswerToKinIsNotRefusedWithItsID(t *testing.T) {
	r := rawEditor(t)
	for bad, code := range map[string]int64{
		`{"jsonrpc":"2.0","id":7,"result":{"applied":tru}}`: rpc.CodeParseError,     // not JSON
		`{"jsonrpc":"2.0","id":7,"error":{"code":"x"}}`:     rpc.CodeInvalidRequest, // not a JSON-RPC error
	} {
		r.Write(rpctest.Framed(bad))
		expect(t, r, map[string]int64{"null": code})
	}
	bad := `{"jsonrpc":"2.0","id":7,"result":null}`
	r.Write(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(bad)+20, bad)) // too long: what follows is the next frame
	r.Write(rpctest.Framed(listReq(8)))
	expect(t, r, map[string]int64{"null": rpc.CodeInvalidRequest, "8": 0})
	// A request's own id still comes back on its refusal.
	r.Write(rpctest.Framed(`{"jsonrpc":"2.0","id":9,"method":"session/list","params":{"x":tru}}`))
	expect(t, r, map[string]int64{"9": rpc.CodeParseError})
}

// A frame over the size cap that is an answer to one of kin's own requests
// (an id and no method) is refused with "id":null, as any answer kin
// cannot read is (TestABadAnswerToKinIsNotRefusedWithItsID). The skipping
// of a frame over the cap answered as soon as it had read an id, before it
// could know whether a "method" follows: kin refused an answer under kin's
// own numbering, and the editor took the refusal for the answer to its
// request of that number.
func TestAnOversizeAnswerToKinIsNotRefusedWithItsID(t *testing.T) {
	for _, length := range []int64{rpc.MaxFrame + 1, 10 << 30} {
		r := rawEditor(t)
		r.Write(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", length, `{"jsonrpc":"2.0","id":7,"result":{"applied":true}}`))
		refused(t, r, "null", rpc.CodeInvalidRequest)
		r.Write(rpctest.Framed(listReq(6)))
		answered(t, r, "6")
		// A request's own id still comes back, read before its method.
		r.Write(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", length, listReq(9)))
		refused(t, r, "9", rpc.CodeInvalidRequest)
	}
}

// A string id that starts as kin's aliases do is carried as an alias of
// its own, so that the answer gives it back as written; so is one over
// the bytes the frame scanner keeps of an id. The scanner kept no id over
// 256 bytes: such a string went through jsonrpc2 unaliased, and once kin
// had aliased any id, the answer's id was taken for an alias and written
// as the raw bytes after the prefix (here a number, or not JSON at all).
func TestALongIDThatLooksLikeAnAliasComesBackAsWritten(t *testing.T) {
	r := rawEditor(t)
	r.Write(rpctest.Framed(listReq(-1))) // kin has aliased an id
	answered(t, r, "-1")
	for _, id := range []string{
		`"\u0000kin-id:7"`,
		`"\u0000kin-id:` + strings.Repeat("7", 300) + `"`,
		`"\u0000kin-id:` + strings.Repeat("x", 300) + `"`,
		`"` + strings.Repeat("y", 300) + `"`,
	} {
		r.Write(rpctest.Framed(`{"jsonrpc":"2.0","id":` + id + `,"method":"session/list","params":{}}`))
		answered(t, r, id)
	}
}
