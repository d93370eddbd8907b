package builtin

import (
	"math/rand"
	"path"
	"testing"
)

// matchSegmentsByTrying is how matchSegments matched before: every way to
// spread the "**"s over the path (exponential). It is the reference the
// linear matcher must agree with.
func matchSegmentsByTrying(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			pat = pat[1:]
			if len(pat) == 0 {
				return len(name) > 0
			}
			for i := 0; i < len(name); i++ {
				if matchSegmentsByTrying(pat, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// The linear matcher answers as trying every way did, for every small
// pattern and path of a few names (random, seeded: the same every run).
func TestMatchSegmentsAgreesWithTryingEveryWay(t *testing.T) {
	rng := rand.New(rand.NewSource(29))
	pats := []string{"**", "a", "b", "*", "?", "a*"}
	names := []string{"a", "b", "ab", "ba"}
	for range 200000 {
		var pat, name []string
		for range rng.Intn(6) {
			pat = append(pat, pats[rng.Intn(len(pats))]) // "**/**" too

		}
		for range rng.Intn(7) {
			name = append(name, names[rng.Intn(len(names))])
		}
		if got, want := matchSegments(pat, name), matchSegmentsByTrying(pat, name); got != want {
			t.Fatalf("matchSegments(%q, %q) = %v, trying every way says %v", pat, name, got, want)
		}
	}
}
