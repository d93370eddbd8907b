package textdiff_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/textdiff"
)

func TestUnifiedDiffShapes(t *testing.T) {
	cases := []struct{ old, new, want string }{
		{"a\n", "a\n", ""},
		{"", "x\n", "--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+x\n"},
		{"x\n", "", "--- a/f\n+++ b/f\n@@ -1 +0,0 @@\n-x\n"},
		{"a\nb", "a\nb\n", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"},
		// two changes far apart: two hunks with 3 lines of context each
		{
			"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n",
			"1\nTWO\n3\n4\n5\n6\n7\n8\n9\n10\nELEVEN\n12\n",
			"--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n 1\n-2\n+TWO\n 3\n 4\n 5\n@@ -8,5 +8,5 @@\n 8\n 9\n 10\n-11\n+ELEVEN\n 12\n",
		},
		// changes 6 lines apart share one hunk
		{
			"1\n2\n3\n4\n5\n6\n7\n8\n9\n",
			"1\nB\n3\n4\n5\n6\n7\n8\nI\n",
			"--- a/f\n+++ b/f\n@@ -1,9 +1,9 @@\n 1\n-2\n+B\n 3\n 4\n 5\n 6\n 7\n 8\n-9\n+I\n",
		},
	}
	for i, c := range cases {
		if got := textdiff.Unified("a/f", "b/f", c.old, c.new); got != c.want {
			t.Errorf("case %d:\ngot  %q\nwant %q", i, got, c.want)
		}
	}
}

// TestUnifiedDiffRandom applies random diffs back and checks they are
// minimal (as many changed lines as an LCS says).
func TestUnifiedDiffRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 2000; iter++ {
		a := randLines(rng, rng.IntN(30))
		b := mutate(rng, a)
		oldT, newT := strings.Join(a, ""), strings.Join(b, "")
		if rng.IntN(5) == 0 && len(newT) > 0 {
			newT = strings.TrimSuffix(newT, "\n") // no final newline
		}
		u := textdiff.Unified("a/f", "b/f", oldT, newT)
		got, err := applyUnified(oldT, u)
		if err != nil || got != newT {
			t.Fatalf("iter %d: apply failed (%v)\nold %q\nnew %q\ndiff:\n%s\ngot %q", iter, err, oldT, newT, u, got)
		}
		al, bl := splitKeep(oldT), splitKeep(newT)
		want := len(al) + len(bl) - 2*lcs(al, bl)
		if changed := countChanged(u); changed != want {
			t.Fatalf("iter %d: %d changed lines, minimal is %d\n%s", iter, changed, want, u)
		}
	}
}

// largeDiffInput is two 20000-line files that share no line: the worst
// case for the diff (its cost is measured by BenchmarkUnifiedDiffLarge).
func largeDiffInput() (string, string) {
	var a, b strings.Builder
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&a, "old line %d\n", i)
		fmt.Fprintf(&b, "new line %d\n", i)
	}
	return a.String(), b.String()
}

// TestUnifiedDiffLargeIsCorrect checks the large diffs are right; how fast
// they are is a benchmark's business (a wall-clock bound fails under load).
func TestUnifiedDiffLargeIsCorrect(t *testing.T) {
	oldT, newT := largeDiffInput()
	u := textdiff.Unified("a/f", "b/f", oldT, newT)
	got, err := applyUnified(oldT, u)
	if err != nil || got != newT {
		t.Fatalf("large diff does not apply: %v", err)
	}
	// no line is shared, so the minimal diff removes and adds every line
	if changed := countChanged(u); changed != 40000 {
		t.Fatalf("large diff changes %d lines, want 40000", changed)
	}
	// many scattered changes: past the cost bound, still a correct diff
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 2; iter++ {
		var x, y strings.Builder
		for i := 0; i < 3000; i++ {
			fmt.Fprintf(&x, "%d\n", rng.IntN(50))
			fmt.Fprintf(&y, "%d\n", rng.IntN(50))
		}
		u := textdiff.Unified("a/f", "b/f", x.String(), y.String())
		if got, err := applyUnified(x.String(), u); err != nil || got != y.String() {
			t.Fatalf("scattered diff does not apply: %v", err)
		}
	}
}

func BenchmarkUnifiedDiffLarge(b *testing.B) {
	oldT, newT := largeDiffInput()
	b.ReportAllocs()
	for b.Loop() {
		textdiff.Unified("a/f", "b/f", oldT, newT)
	}
}

func randLines(rng *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = string(rune('a'+rng.IntN(4))) + "\n"
	}
	return out
}

func mutate(rng *rand.Rand, a []string) []string {
	b := append([]string(nil), a...)
	for k := rng.IntN(6); k > 0; k-- {
		switch i := rng.IntN(len(b) + 1); rng.IntN(3) {
		case 0:
			b = append(b[:i], append([]string{string(rune('a'+rng.IntN(5))) + "\n"}, b[i:]...)...)
		case 1:
			if i < len(b) {
				b = append(b[:i], b[i+1:]...)
			}
		case 2:
			if i < len(b) {
				b[i] = "z\n"
			}
		}
	}
	return b
}

func splitKeep(s string) []string {
	if s == "" {
		return nil
	}
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

func countChanged(u string) int {
	n := 0
	for _, l := range strings.Split(u, "\n") {
		if (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) && !strings.HasPrefix(l, "+++ ") && !strings.HasPrefix(l, "--- ") {
			n++
		}
	}
	return n
}

// applyUnified is a strict patch: every context and removed line must match
// at the position its hunk header gives.
func applyUnified(old, u string) (string, error) {
	if u == "" {
		return old, nil
	}
	src := splitKeep(old)
	var out []string
	pos := 0
	lines := strings.SplitAfter(u, "\n")
	i := 2 // headers
	for i < len(lines) && lines[i] != "" {
		h := strings.TrimSuffix(lines[i], "\n")
		var oldStart int
		if !strings.HasPrefix(h, "@@ -") {
			return "", fmt.Errorf("bad hunk header %q", h)
		}
		spec := strings.Fields(h)[1][1:]
		startS, countS, hasCount := strings.Cut(spec, ",")
		oldStart, _ = strconv.Atoi(startS)
		count := 1
		if hasCount {
			count, _ = strconv.Atoi(countS)
		}
		from := oldStart - 1
		if count == 0 {
			from = oldStart
		}
		if from < pos {
			return "", fmt.Errorf("hunk goes back: %q", h)
		}
		out = append(out, src[pos:from]...)
		pos = from
		i++
		for i < len(lines) && lines[i] != "" && !strings.HasPrefix(lines[i], "@@") {
			l := lines[i]
			text := l[1:]
			if i+1 < len(lines) && lines[i+1] == "\\ No newline at end of file\n" {
				text = strings.TrimSuffix(text, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if pos >= len(src) || src[pos] != text {
					return "", fmt.Errorf("line %d: %q does not match %q", pos+1, text, src[min(pos, len(src)-1)])
				}
				if l[0] == ' ' {
					out = append(out, text)
				}
				pos++
			case '+':
				out = append(out, text)
			default:
				return "", fmt.Errorf("bad line %q", l)
			}
			i++
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, ""), nil
}
