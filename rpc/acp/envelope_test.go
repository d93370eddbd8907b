package acp

import (
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/rpc"
)

// JSON-RPC's member names are case-sensitive, and jsonrpc2 reads a
// request's "id" and "method" so (through a map): {"ID":-1,"method":…} is
// a notification to it. kin's envelope check read "ID" as the id
// (encoding/json's struct fields match any case), carried -1 through
// jsonrpc2 as an alias, which added an "id", and kin answered a
// notification and ran it as a request; {"id":-2,"ID":2} had its id read
// as 2, not aliased, and was answered as 18446744073709551614; a message
// with "JSONRPC" and no "jsonrpc" passed as JSON-RPC 2.0. kin reads the
// envelope as jsonrpc2 decodes the message.
func TestTheEnvelopeIsReadWithCaseSensitiveMembersAsJSONRPC2ReadsThem(t *testing.T) {
	w := newWorld(t)
	c := w.rawConnect()
	c.initialize()

	// Notifications to jsonrpc2: nothing is answered.
	c.send(`{"jsonrpc":"2.0","ID":-1,"method":"no/such/method"}`)
	c.send(`{"jsonrpc":"2.0","ID":null,"method":"no/such/method"}`)
	c.send(`{"jsonrpc":"2.0","Id":"x","method":"no/such/method"}`)

	// The id is the "id" member, whatever else the message holds.
	c.send(`{"jsonrpc":"2.0","id":-2,"ID":2,"method":"session/list","params":{}}`)
	if a := c.answer("-2"); a["error"] != nil {
		t.Errorf("session/list with id -2 (and an \"ID\" member): %v", a["error"])
	}

	// "JSONRPC" is not "jsonrpc".
	c.send(`{"JSONRPC":"2.0","id":3,"method":"session/list","params":{}}`)
	a := c.answer("3")
	if e, _ := a["error"].(map[string]any); e == nil || e["code"] != float64(rpc.CodeInvalidRequest) || !strings.Contains(e["message"].(string), `"jsonrpc"`) {
		t.Errorf("a message with \"JSONRPC\" and no \"jsonrpc\": %v, want it refused", a)
	}

	c.send(`{"jsonrpc":"2.0","id":7,"method":"session/list","params":{}}`)
	c.answer("7")
	// Every answer kin wrote by now has been read or is on its way:
	// anything else that comes was an answer to a notification.
	quiet := time.After(300 * time.Millisecond)
	for {
		select {
		case m := <-c.lines:
			if _, isReq := m["method"]; !isReq {
				c.early[m[rawID].(string)] = append(c.early[m[rawID].(string)], m)
			}
			continue
		case <-quiet:
		}
		break
	}
	for id, as := range c.early {
		if len(as) > 0 {
			t.Errorf("kin answered a notification (or answered twice): id %s: %v", id, as)
		}
	}
}

// An id spelt with escapes, or repeated, is the id jsonrpc2 reads (the
// key it spells; the last one), aliased as any other when jsonrpc2 cannot
// hold it, and comes back under it.
func TestEscapedAndRepeatedIDKeysAreReadAsJSONRPC2ReadsThem(t *testing.T) {
	w := newWorld(t)
	c := w.rawConnect()
	c.initialize()
	for line, id := range map[string]string{
		`{"jsonrpc":"2.0","\u0069d":-1,"method":"session/list","params":{}}`:                 `-1`,
		`{"jsonrpc":"2.0","\u0069\u0064":1.5,"\u006detho\u0064":"session/list","params":{}}`: `1.5`,
		`{"jsonrpc":"2.0","id":1,"id":-2,"method":"session/list","params":{}}`:               `-2`,
		`{"jsonrpc":"2.0","id":-3,"\u0069d":"x","method":"session/list","params":{}}`:        `"x"`,
	} {
		c.send(line)
		if a := c.answer(id); a["error"] != nil {
			t.Errorf("%s: %v", line, a["error"])
		}
	}
}

// A request's id is a string or a number (JSON-RPC), and jsonrpc2 holds
// nothing else. kin acp's envelope check took any JSON value for the id and
// carried it through jsonrpc2 as an alias: {"id":true,"method":…} ran as a
// request and was answered with "id":true (an object or an array id alike),
// where kin serve, and jsonrpc2 itself, refuse it. It is refused with id
// null, as JSON-RPC answers a request whose id cannot be read, and it does
// not run.
func TestARequestWhoseIDIsNeitherAStringNorANumberIsRefused(t *testing.T) {
	w := newWorld(t)
	c := w.rawConnect()
	c.initialize()
	for _, id := range []string{`true`, `{"a":1}`, `[1]`} {
		c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"session/list","params":{}}`)
		a := c.answer("null")
		if e, _ := a["error"].(map[string]any); e == nil || e["code"] != float64(rpc.CodeInvalidRequest) {
			t.Errorf("a request with id %s: %v, want it refused (-32600) with id null", id, a)
		}
		if q := c.early[id]; len(q) > 0 {
			t.Errorf("a request with id %s was answered under it: %v", id, q)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":7,"method":"session/list","params":{}}`)
	if a := c.answer("7"); a["error"] != nil {
		t.Fatalf("session/list after them: %v", a["error"])
	}
}
