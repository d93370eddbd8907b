package connect

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// The order a server wrote its form's properties in is kept from every
// place a form comes: an elicitation/create on a stdio line, an event
// stream's data line, a JSON body read in pieces, and each question of an
// input-required result. Lines that are not JSON, or not forms, teach
// nothing; the last form with a set of names wins.
func TestPropertyOrderIsReadFromTheWire(t *testing.T) {
	create := `{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{"message":"hi","requestedSchema":{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer"},"mid":{"type":"boolean","description":"has \"requestedSchema\" in it"}},"required":["zeta"]}}}`
	result := `{"jsonrpc":"2.0","id":4,"result":{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"requestedSchema":{"properties":{"seats":{"type":"integer"},"day":{"type":"string"}}}}}}}}`

	var o PropertyOrder
	f := newNoiseFilter(newReader(create+"\nnot json \"requestedSchema\"\n"+result+"\n"), nil)
	f.order = &o
	if _, err := io.ReadAll(f); err != nil {
		t.Fatal(err)
	}
	if got := o.Order([]string{"alpha", "mid", "zeta"}); !slices.Equal(got, []string{"zeta", "alpha", "mid"}) {
		t.Errorf("stdio form: %v", got)
	}
	if got := o.Order([]string{"day", "seats"}); !slices.Equal(got, []string{"seats", "day"}) {
		t.Errorf("input request: %v", got)
	}
	if got := o.Order([]string{"other"}); got != nil {
		t.Errorf("an unknown form: %v", got)
	}

	var h PropertyOrder
	sse := "event: message\ndata: " + strings.Replace(create, `"zeta":{"type":"string"},`, "", 1) + "\n\n"
	body := &orderBody{rc: io.NopCloser(&oneByte{s: sse + strings.Replace(result, "seats", "tables", 1)}), order: &h}
	if _, err := io.ReadAll(body); err != nil {
		t.Fatal(err)
	}
	if got := h.Order([]string{"mid", "alpha"}); !slices.Equal(got, []string{"alpha", "mid"}) {
		t.Errorf("event stream: %v", got)
	}
	if got := h.Order([]string{"day", "tables"}); !slices.Equal(got, []string{"tables", "day"}) {
		t.Errorf("a body without a last line end: %v", got)
	}
}

func newReader(s string) io.ReadCloser { return io.NopCloser(strings.NewReader(s)) }

// oneByte reads one byte at a time, as a slow network would.
type oneByte struct{ s string }

func (r *oneByte) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	p[0] = r.s[0]
	r.s = r.s[1:]
	return 1, nil
}
