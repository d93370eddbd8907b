package spend

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two kins on one KIN_HOME see each other's requests on their way; a hold
// let go, or left by a kin that was killed, counts nothing (a killed
// kin's would otherwise narrow the day's limits for good).
func TestHoldsCountInEveryKinUntilLetGoOrTheKinDies(t *testing.T) {
	home := t.TempDir()
	a, b := OpenDay(home, nil), OpenDay(home, nil)
	next := Tally{InputTokens: 1000, Cost: 0.5}
	var seen Tally
	if ok, err := a.Hold(next, func(_, others Tally) bool { seen = others; return true }); !ok || err != nil || !seen.Zero() {
		t.Fatalf("a's hold: %v %v (others %+v)", ok, err, seen)
	}
	if ok, err := b.Hold(next, func(_, others Tally) bool { seen = others; return false }); ok || err != nil || seen.InputTokens != 1000 {
		t.Fatalf("b's check saw %+v of a's hold (%v %v)", seen, ok, err)
	}
	if _, _, others, _ := b.TodayHeld(); others.InputTokens != 1000 {
		t.Errorf("b sees %+v held by a", others)
	}
	a.Release(next, Tally{})
	a.Close()
	if _, _, others, _ := b.TodayHeld(); !others.Zero() {
		t.Errorf("a let go, b still sees %+v", others)
	}

	// a holds again and is killed: its liveness lock goes with it
	if ok, err := a.Hold(next, func(_, _ Tally) bool { return true }); !ok || err != nil {
		t.Fatal(ok, err)
	}
	a.ownerFile.Close()
	if _, _, others, _ := b.TodayHeld(); !others.Zero() {
		t.Errorf("a killed kin's hold counts: %+v", others)
	}
	if _, err := os.Stat(filepath.Join(home, "run", "spend", a.owner+".lock")); !os.IsNotExist(err) {
		t.Errorf("the dead kin's lock file stays: %v", err)
	}
	if ok, _ := b.Hold(next, func(_, _ Tally) bool { return true }); !ok {
		t.Fatal("b's hold")
	}
	data, _ := os.ReadFile(filepath.Join(home, DayFile))
	if strings.Contains(string(data), a.owner) {
		t.Errorf("the dead kin's record is still in the ledger:\n%s", data)
	}
}

// A request's usage and the release of its hold reach the ledger in one
// write: another kin sees the hold or the usage, never both (it would be
// asked about a limit too early) and never neither (it would see room
// that is not there).
func TestAReleaseWritesTheUsageWithIt(t *testing.T) {
	home := t.TempDir()
	a, b := OpenDay(home, nil), OpenDay(home, nil)
	next := Tally{InputTokens: 1000}
	used := Tally{InputTokens: 1000, OutputTokens: 10}
	for i := int64(0); i < 20; i++ {
		if ok, err := a.Hold(next, func(_, _ Tally) bool { return true }); !ok || err != nil {
			t.Fatal(ok, err)
		}
		a.Release(next, used)
		for {
			_, seen, others, err := b.TodayHeld()
			if err != nil {
				t.Fatal(err)
			}
			before, after := seen.Tokens() == i*1010 && others.InputTokens == 1000, seen.Tokens() == (i+1)*1010 && others.Zero()
			if !before && !after {
				t.Fatalf("request %d: b sees %d tokens used and %d held", i, seen.Tokens(), others.InputTokens)
			}
			if after {
				break
			}
		}
	}
}

// BenchmarkHold is the day's check and hold of one request: one locked,
// synced write of the ledger, on the request's way out, with a day's
// limit set (the release before it is mostly written with it: the
// background writer yields to a Hold waiting).
func BenchmarkHold(b *testing.B) {
	d := OpenDay(b.TempDir(), nil)
	next := Tally{InputTokens: 1000}
	for b.Loop() {
		if ok, err := d.Hold(next, func(_, _ Tally) bool { return true }); !ok || err != nil {
			b.Fatal(ok, err)
		}
		d.Release(next, Tally{})
	}
	d.Wait()
}

// BenchmarkDayRequest is the ledger's part of one request with a day's
// limit: its check and hold, then its usage with the hold let go, written
// before the next request comes.
func BenchmarkDayRequest(b *testing.B) {
	d := OpenDay(b.TempDir(), nil)
	next := Tally{InputTokens: 1000}
	used := Tally{InputTokens: 1000, OutputTokens: 10}
	for b.Loop() {
		if ok, err := d.Hold(next, func(_, _ Tally) bool { return true }); !ok || err != nil {
			b.Fatal(ok, err)
		}
		d.Release(next, used)
		d.Wait()
	}
}

// A kin that ends leaves no liveness file behind: a kin whose record was
// let go is never looked at again by another, so its file stayed in
// run/spend for good, one more for every kin that ever held a request.
func TestAnEndingKinLeavesNoLivenessFile(t *testing.T) {
	home := t.TempDir()
	a, b := OpenDay(home, nil), OpenDay(home, nil)
	next := Tally{InputTokens: 1000}
	for _, d := range []*Day{a, b} {
		if ok, err := d.Hold(next, func(_, _ Tally) bool { return true }); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	a.Release(next, Tally{InputTokens: 900, OutputTokens: 10})
	a.Close()
	// b still holds: its file stays; a's record and file are gone
	_, used, others, err := OpenDay(home, nil).TodayHeld()
	if err != nil || used.InputTokens != 900 || others.InputTokens != 1000 {
		t.Errorf("after a ended: used %+v, held by the others %+v (%v); want a's usage and b's hold", used, others, err)
	}
	b.Close() // ends with its request on its way (a kin stopped mid-request): its hold goes with it
	if _, _, others, _ := OpenDay(home, nil).TodayHeld(); !others.Zero() {
		t.Errorf("the ended kins' holds count: %+v", others)
	}
	left, err := os.ReadDir(filepath.Join(home, "run", "spend"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left in run/spend: %s", e.Name())
	}
}
