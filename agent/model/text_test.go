package model_test

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/modeltest"
)

// streamed runs one streamed answer of n one-word deltas and returns the
// text and the bytes allocated meanwhile (by the client and the mock).
func streamed(t testing.TB, m *modeltest.Server, n int) (string, uint64) {
	m.Script(modeltest.Reply{Text: strings.Split(strings.Repeat("word ", n), " ")[:n]})
	c := model.New(model.Config{APIKey: "k", BaseURL: m.URL(), Model: "mock-1"}, nil)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	resp, err := c.Stream(context.Background(), model.Request{Input: []model.Item{{Role: "user", Text: "talk"}}}, model.Handlers{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Text, after.TotalAlloc - before.TotalAlloc
}

// A long answer is assembled in time and memory linear in its length (it
// was assembled with +=: 80k deltas cost 9.7 s of CPU). Doubling the
// deltas must not much more than double what is allocated.
func TestStreamedTextIsAssembledLinearly(t *testing.T) {
	m := modeltest.New()
	defer m.Close()
	const n = 10_000
	text, one := streamed(t, m, n)
	if want := strings.Repeat("word", n); text != want {
		t.Fatalf("assembled %d bytes, want %d", len(text), len(want))
	}
	_, two := streamed(t, m, 2*n)
	if ratio := float64(two) / float64(one); ratio > 2.6 {
		t.Errorf("twice the deltas allocated %.1f times the bytes (%d MiB, then %d MiB): quadratic assembly", ratio, one>>20, two>>20)
	}
}
