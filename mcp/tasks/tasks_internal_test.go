package tasks

import (
	"encoding/json"
	"testing"
	"time"
)

// A server's pollIntervalMs is honoured within MinPoll..MaxPoll: it cannot
// make kin poll in a busy loop nor wait an hour.
func TestInterval(t *testing.T) {
	ms := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		poll *int64
		want time.Duration
	}{
		{nil, DefaultPoll}, {ms(0), MinPoll}, {ms(-5), MinPoll}, {ms(2000), 2 * time.Second}, {ms(3_600_000), MaxPoll},
	} {
		if got := interval(Task{PollIntervalMs: tc.poll}); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.poll, got, tc.want)
		}
	}
}

func TestParseAndExpiry(t *testing.T) {
	if _, err := Parse(json.RawMessage(`{"resultType":"task","status":"working"}`)); err == nil {
		t.Error("a task without an id accepted")
	}
	if _, err := Parse(json.RawMessage(`[1]`)); err == nil {
		t.Error("a task that is not an object accepted")
	}
	old := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano)
	tk, err := Parse(json.RawMessage(`{"resultType":"task","taskId":"a","status":"working","createdAt":"` + old + `","ttlMs":60000}`))
	if err != nil || tk.TaskID != "a" || !expired(*tk) {
		t.Fatalf("%+v %v expired=%v", tk, err, expired(*tk))
	}
	tk.TTLMs = nil
	if expired(*tk) {
		t.Error("a task without a ttl expired")
	}
}
