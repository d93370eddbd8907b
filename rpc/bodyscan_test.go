package rpc

import (
	"strings"
	"testing"
)

func TestBodyScan(t *testing.T) {
	for _, c := range []struct {
		body string
		id   string
		end  int // bytes up to the end of the value; -1: not found
	}{
		{`{"id":5,"x":1}`, `5`, 14},
		{`{"params":{"id":9},"id":"a"}`, `"a"`, 28},
		{`{"params":"}\"{","id":-1}`, `-1`, 25},
		{`  {"id" : 3 } {"id":4}`, `3`, 13},
		{`{"id":{"a":1}}`, ``, 14},
		{`{"id":true}`, ``, 11},
		{`{"i\"d":1}`, ``, 10},
		// A key spelt with escapes is the key it spells, as jsonrpc2 reads it.
		{`{"\u0069d":-1}`, `-1`, 14},
		{`{"\u0069\u0064":"x"}`, `"x"`, 20},
		{`{"\u0069\u0044":2}`, ``, 18},
		{`{"\u0069dx":3,"a\u0069d":4}`, ``, 27},
		{`{"idx":1,"id":2}`, `2`, 16},
		// The last of a repeated "id" is the id, as jsonrpc2 (encoding/json)
		// reads it: a later null, object or over-long one leaves none.
		{`{"id":-1,"id":null}`, ``, 19},
		{`{"id":-1,"id":{"a":1}}`, ``, 22},
		{`{"id":-1,"id":true}`, ``, 19},
		{`{"id":-1,"id":"` + strings.Repeat("x", maxIDBytes) + `"}`, ``, 17 + maxIDBytes},
		{`{"id":null,"id":-1}`, `-1`, 19},
		{`[{"id":1}]`, ``, 10},
		{`"just a string"`, ``, -1},
		{`{"id":7,"params":{"text":"cut here`, `7`, -1},
	} {
		for _, step := range []int{1, 3, len(c.body)} {
			var b bodyScan
			used := 0
			for used < len(c.body) && !b.ended() {
				next := min(used+step, len(c.body))
				used += b.feed([]byte(c.body[used:next]))
			}
			end := -1
			if b.ended() {
				end = used
			}
			if string(b.id) != c.id || end != c.end {
				t.Errorf("%s (steps of %d): id %q end %d, want %q %d", c.body, step, b.id, end, c.id, c.end)
			}
		}
	}
}

// A refusal carries the id of a request (it has a method), never that of
// an answer to one of kin's own requests.
func TestBodyScanRequestID(t *testing.T) {
	for body, want := range map[string]string{
		`{"id":5,"method":"m"}`:                               `5`,
		`{"method":"m","id":"a"}`:                             `"a"`,
		`{"id":5,"\u006d\u0065\u0074\u0068\u006f\u0064":"m"}`: `5`,
		`{"id":5,"result":{"method":"m"}}`:                    ``,
		`{"id":5,"result":null}`:                              ``,
		`{"id":5,"methods":"m"}`:                              ``,
		`{"id":-1,"method":"m","id":null}`:                    ``,
	} {
		var b bodyScan
		b.feed([]byte(body))
		if got := string(b.requestID()); got != want {
			t.Errorf("%s: request id %q, want %q", body, got, want)
		}
	}
}

// A request whose id is null (the last "id", spelt in any way jsonrpc2
// reads it) is refused; a notification, an answer, a nested null id or a
// later usable id are not.
func TestBodyScanNullIDRequest(t *testing.T) {
	for body, want := range map[string]bool{
		`{"id":null,"method":"m"}`:                 true,
		`{"method":"m", "id" : null }`:             true,
		`{"\u0069d":null,"\u006dethod":"m"}`:       true,
		`{"id":-1,"method":"m","id":null}`:         true,
		`{"id":null,"method":"m","id":-1}`:         false,
		`{"id":null,"method":"m","id":true}`:       false,
		`{"id":null,"result":1}`:                   false,
		`{"method":"m"}`:                           false,
		`{"method":"m","params":{"id":null}}`:      false,
		`{"ID":null,"method":"m"}`:                 false,
		`{"id":"null","method":"m"}`:               false,
		`[{"id":null,"method":"m"}]`:               false,
		`{"id":null,"method":null,"params":"x"}`:   true,
		`{"id":null,"params":"}\"{","method":"m"}`: true,
	} {
		for _, step := range []int{1, len(body)} {
			var b bodyScan
			for used := 0; used < len(body) && !b.ended(); {
				used += b.feed([]byte(body[used:min(used+step, len(body))]))
			}
			if got := b.nullIDRequest(); got != want {
				t.Errorf("%s (steps of %d): a request with a null id: %v, want %v", body, step, got, want)
			}
		}
	}
}
