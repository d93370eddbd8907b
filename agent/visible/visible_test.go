package visible_test

import (
	"testing"

	"github.com/kin-dev/kin/agent/visible"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, ünïcödé, 日本語", "plain text, ünïcödé, 日本語"},
		{"invoice_\u202egpj.exe", `invoice_\u202egpj.exe`},
		{"zero\u200bwidth\u2060join\ufeff", `zero\u200bwidth\u2060join\ufeff`},
		{"\u2066isolate\u2069 \u200fmark", `\u2066isolate\u2069 \u200fmark`},
		{"lines\nand\ttabs\r\nstay", "lines\nand\ttabs\r\nstay"},
		{"safe\rrm -rf ~", `safe\x0drm -rf ~`},
		{"\x1b[2Jclear\x00nul\u0085nel", `\x1b[2Jclear\x00nul\x85nel`},
		{"sep\u2028line\u2029para", `sep\u2028line\u2029para`},
		{"bad \xe8 byte", `bad \xe8 byte`},
		{"tag \U000E0041", `tag \U000e0041`},
	} {
		if got := visible.Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestStrip(t *testing.T) {
	in := "Se\u200Barch\u202E the \u2066docs\u2069\uFEFF\u2060 now\u200F\x07\xe8"
	if got := visible.Strip(in); got != "Search the docs now" {
		t.Fatalf("Strip = %q", got)
	}
}

// Escaping never loses or invents text: every hidden character is spelled
// out, every other character kept, so nothing hidden survives.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"invoice_\u202egpj.exe", "a\r\nb\rc", "\xe8\xff", "日本\u200b語"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := visible.Escape(s)
		for i, r := range out {
			if visible.Hidden(r) && !(r == '\r' && i+1 < len(out) && out[i+1] == '\n') {
				t.Fatalf("Escape(%q) = %q keeps hidden %U", s, out, r)
			}
		}
		if visible.Strip(s) == s && out != s {
			t.Fatalf("Escape changed text without hidden characters: %q -> %q", s, out)
		}
	})
}

func TestCutAndClip(t *testing.T) {
	for _, tc := range []struct {
		in      string
		n       int
		cut, cl string
	}{
		{"short", 10, "short", "short"},
		{"exactly10!", 10, "exactly10!", "exactly10!"},
		{"eleven runes", 10, "eleven ru…", "eleven ru…"},
		// runes, not bytes: never half a character
		{"日本語のテキストです", 5, "日本語の…", "日本語の…"},
		{"ünïcödé ünïcödé", 8, "ünïcödé…", "ünïcödé…"},
		// Cut keeps the lines; Clip makes one line of them
		{"a\nb  c", 10, "a\nb  c", "a b c"},
		{"line one\nline two", 12, "line one\nli…", "line one li…"},
	} {
		if got := visible.Cut(tc.in, tc.n); got != tc.cut {
			t.Errorf("Cut(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.cut)
		}
		if got := visible.Clip(tc.in, tc.n); got != tc.cl {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.cl)
		}
	}
}
