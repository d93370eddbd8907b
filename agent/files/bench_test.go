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
	sb := benchText()
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

// BenchmarkKeystrokeRange is the part of a keystroke that finds where its
// range lies (line 10,000 of the same buffer), apart from the copy of the
// buffer that applying it costs.
func BenchmarkKeystrokeRange(b *testing.B) {
	text := benchText().String()
	r := Range{Start: Position{Line: 10000, Character: 12}, End: Position{Line: 10000, Character: 12}}
	for b.Loop() {
		if _, _, err := rangeOffsets(text, r); err != nil {
			b.Fatal(err)
		}
	}
}

func benchText() *strings.Builder {
	var sb strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&sb, "line %05d: the quick brown fox jumps over the lazy dog 😀\n", i)
	}
	return &sb
}
