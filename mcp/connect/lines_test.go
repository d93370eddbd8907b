package connect

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestNoiseFilter(t *testing.T) {
	msg := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"
	in := "banner\n\n" + msg + `{"level":30}` + "\n" + `"a string"` + "\n" + "[1,2]\n" + msg + `{"jsonrpc":"2.0","id":2` + "\n"
	var noise []string
	f := newNoiseFilter(io.NopCloser(strings.NewReader(in)), func(l []byte) { noise = append(noise, string(bytes.TrimSpace(l))) })
	out, err := io.ReadAll(f)
	if err != nil || string(out) != msg+"[1,2]\n"+msg {
		t.Fatalf("passed %q, %v", out, err)
	}
	if strings.Join(noise, "|") != `banner|{"level":30}|"a string"|{"jsonrpc":"2.0","id":2` {
		t.Errorf("noise %q", noise)
	}

	long := strings.Repeat("x", MaxMessage+1) + "\n"
	if _, err := io.ReadAll(newNoiseFilter(io.NopCloser(strings.NewReader(long+msg)), nil)); err == nil || !strings.Contains(err.Error(), "a line of more than") {
		t.Errorf("over-long line: %v", err)
	}
	flood := strings.Repeat("noise\n", maxNoiseLines+1) + msg
	if _, err := io.ReadAll(newNoiseFilter(io.NopCloser(strings.NewReader(flood)), nil)); err == nil || !strings.Contains(err.Error(), "1001 lines") {
		t.Errorf("flood: %v", err)
	}
}

// BenchmarkNoiseFilter is the filter's cost per 4 KiB message line (one op).
func BenchmarkNoiseFilter(b *testing.B) {
	line := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("y", 4000) + `"}]}}` + "\n"
	in := strings.Repeat(line, 256)
	b.SetBytes(int64(len(line)))
	buf := make([]byte, 32<<10)
	f := newNoiseFilter(io.NopCloser(strings.NewReader("")), nil)
	r := strings.NewReader(in)
	for b.Loop() {
		n := 0
		for n < len(line) {
			m, err := f.Read(buf)
			if err != nil { // the input ran out: start it over
				r.Reset(in)
				f = newNoiseFilter(io.NopCloser(r), nil)
				continue
			}
			n += m
		}
	}
}
