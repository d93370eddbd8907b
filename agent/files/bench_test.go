package files

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkOverlayKeystroke is the cost of one didChange the editor sends
// per keystroke: one character typed in the middle of a buffer of about
// 1 MiB (20,000 lines), in the read loop.
func BenchmarkOverlayKeystroke(b *testing.B) {
	var sb strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&sb, "line %05d: the quick brown fox jumps over the lazy dog 😀\n", i)
	}
	o := NewOverlay()
	p := "/ws/big.txt"
	_, _ = o.Open("file://"+p, p, 1, sb.String())
	b.SetBytes(int64(sb.Len()))
	b.ReportAllocs()
	v := int64(1)
	for b.Loop() {
		v++
		r := &Range{Start: Position{Line: 10000, Character: 12}, End: Position{Line: 10000, Character: 12}}
		if err := o.Change("file://"+p, v, []TextChange{{Range: r, Text: "x"}}); err != nil {
			b.Fatal(err)
		}
	}
}
