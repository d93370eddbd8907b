package spend

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/settings"
)

func TestEstimateIsAboutFourBytesATokenAndNeverZeroForBytes(t *testing.T) {
	for _, c := range []struct {
		n    int
		want int64
	}{{0, 0}, {-3, 0}, {1, 1}, {4, 1}, {5, 2}, {4000, 1000}} {
		if got := Estimate(c.n); got != c.want {
			t.Errorf("Estimate(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

func TestChargePricesCachedInputApartAndNeverAssumesADiscount(t *testing.T) {
	cfg, err := NewConfig(settings.Limits{Currency: "EUR", Prices: map[string]settings.Price{
		"big":   {Input: 2, CachedInput: 0.5, Output: 8},
		"plain": {Input: 1, Output: 4}, // no cached price: cached input costs the input price
	}})
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Charge("big", 1_000_000, 400_000, 100_000, false)
	// 600k uncached at 2, 400k cached at 0.5, 100k out at 8
	if want := 1.2 + 0.2 + 0.8; math.Abs(c.Cost-want) > 1e-9 || c.Unpriced || c.Tokens() != 1_100_000 {
		t.Errorf("big: %+v, want cost %v", c, want)
	}
	if c := cfg.Charge("plain", 1_000_000, 1_000_000, 0, true); math.Abs(c.Cost-1) > 1e-9 || !c.Estimated {
		t.Errorf("plain: %+v", c)
	}
	// More cached than input (a service's odd report) counts as all cached.
	if c := cfg.Charge("big", 100, 500, 0, false); c.CachedInputTokens != 100 {
		t.Errorf("cached beyond input: %+v", c)
	}
	u := cfg.Charge("unknown", 10, 0, 5, false)
	if u.Cost != 0 || !u.Unpriced || u.Tokens() != 15 {
		t.Errorf("a model without a price: %+v", u)
	}
	if none, _ := NewConfig(settings.Limits{TurnTokens: 5}); none.Charge("m", 10, 0, 5, false).Unpriced {
		t.Error("unpriced where no model has a price")
	}
	if cfg.Currency() != "EUR" || !cfg.Priced("big") || cfg.Priced("unknown") {
		t.Errorf("currency %q", cfg.Currency())
	}
	if got := cfg.InputCost("plain", 500_000); math.Abs(got-0.5) > 1e-9 {
		t.Errorf("input cost %v", got)
	}
}

func TestBadLimitsAreErrorsNamingThem(t *testing.T) {
	for _, c := range []struct {
		l    settings.Limits
		want string
	}{
		{settings.Limits{TurnTokens: -1}, "turnTokens"},
		{settings.Limits{DayCost: math.NaN(), Prices: map[string]settings.Price{"m": {Input: 1}}}, "dayCost"},
		{settings.Limits{Prices: map[string]settings.Price{"m": {Output: -2}}}, "prices.m.output"},
		{settings.Limits{SessionCost: 5}, "needs prices"},
	} {
		_, err := NewConfig(c.l)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %s", c.l, err, c.want)
		}
	}
	cfg, err := NewConfig(settings.Limits{})
	if err != nil || len(cfg.Limits("")) != 0 || cfg.Currency() != DefaultCurrency {
		t.Errorf("no limits: %v %v", err, cfg.Limits(""))
	}
}

func TestLimitsAreCheckedSmallestScopeFirstAndCrossWithTheNextRequest(t *testing.T) {
	cfg, _ := NewConfig(settings.Limits{DayTokens: 1000, TurnTokens: 100, SessionCost: 2, Prices: map[string]settings.Price{"m": {Input: 1, Output: 1}}})
	var names []string
	for _, l := range cfg.Limits("") {
		names = append(names, l.Name())
	}
	if got := strings.Join(names, " "); got != "turnTokens sessionCost dayTokens" {
		t.Errorf("order %s", got)
	}
	turn := cfg.Limits(ScopeTurn)[0]
	if _, over := Cross(turn, 90, 10); over {
		t.Error("90 + 10 of 100 is within the limit")
	}
	c, over := Cross(turn, 90, 11)
	if !over {
		t.Fatal("90 + 11 of 100 passes it")
	}
	if got := c.Title("USD"); got != "This turn has used 90 tokens of its limit of 100 tokens (limits.turnTokens); the next model request adds about 11 tokens" {
		t.Errorf("title %q", got)
	}
	if c.Raised(100) != 201 {
		t.Errorf("raised to %v", c.Raised(100))
	}
	cost := cfg.Limits(ScopeSession)[0]
	// what requests on their way hold counts, is said, and is raised over
	if _, over := CrossHeld(turn, 80, 10, 10); over {
		t.Error("80 used, 10 held and 10 next pass a limit of 100")
	}
	c, over = CrossHeld(turn, 80, 11, 10)
	if !over || c.Raised(100) != 201 {
		t.Fatalf("%+v %v", c, over)
	}
	if got := c.Title("USD"); got != "This turn has used 80 tokens of its limit of 100 tokens (limits.turnTokens); requests on their way add about 11 tokens; the next model request adds about 10 tokens" {
		t.Error(got)
	}
	c, _ = Cross(cost, 1.995, 0.005)
	if got := c.Title("USD"); !strings.Contains(got, "2.00 USD of its limit of 2.00 USD") || !strings.Contains(got, "0.0050 USD") {
		t.Errorf("cost title %q", got)
	}
}

func TestTwoProcessesAddUpInTheDaysLedger(t *testing.T) {
	home := t.TempDir()
	now := func() time.Time { return time.Date(2026, 12, 2, 23, 0, 0, 0, time.Local) }
	var wg sync.WaitGroup
	for range 2 { // two kins, each with its own Day on the same file
		d := OpenDay(home, now)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				if err := d.Add(Tally{InputTokens: 10, OutputTokens: 1, Cost: 0.5}); err != nil {
					t.Error(err)
				}
			}
			d.Wait() // as a kin does when it ends
		}()
	}
	wg.Wait()
	date, today, err := OpenDay(home, now).Today()
	if err != nil || date != "2026-12-02" || today.InputTokens != 500 || today.OutputTokens != 50 || today.Cost != 25 {
		t.Fatalf("%s %+v %v", date, today, err)
	}
	// The next day starts at zero; days long past are dropped.
	later := func() time.Time { return now().AddDate(0, 0, 70) }
	if _, today, _ := OpenDay(home, later).Today(); !today.Zero() {
		t.Errorf("a new day: %+v", today)
	}
	d := OpenDay(home, later)
	if err := d.Add(Tally{InputTokens: 1}); err != nil {
		t.Fatal(err)
	}
	d.Wait()
	b, _ := os.ReadFile(filepath.Join(home, DayFile))
	if strings.Contains(string(b), "2026-12-02") {
		t.Errorf("a day 70 days ago is still kept:\n%s", b)
	}
}

func TestALedgerKinCannotReadIsAnErrorNeverAZero(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, DayFile)
	if err := os.WriteFile(path, []byte(`{"days": {"2026-12-02": {"inputTokens": "lots"`), 0o600); err != nil {
		t.Fatal(err)
	}
	d := OpenDay(home, nil)
	if _, _, err := d.Today(); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Today: %v", err)
	}
	// the write fails in the background: the next Add says why, and the
	// ledger is left as it was
	if err := d.Add(Tally{InputTokens: 1}); err != nil {
		t.Fatalf("the first Add: %v", err)
	}
	d.Wait()
	if err := d.Add(Tally{InputTokens: 1}); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("the Add after a failed write: %v", err)
	}
	d.Wait()
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "lots") {
		t.Errorf("the ledger was replaced: %s", b)
	}
}

// What Add counted is in Today at once, before it is written, and
// counted once while it is written; nothing counted is lost when the
// file cannot be written for a while.
func TestTodayCountsWhatIsNotWrittenYetOnce(t *testing.T) {
	home := t.TempDir()
	d := OpenDay(home, nil)
	other := OpenDay(home, nil) // another kin
	for i := range 40 {
		if err := d.Add(Tally{InputTokens: 10}); err != nil {
			t.Fatal(err)
		}
		_, today, err := d.Today()
		if err != nil || today.InputTokens != int64(10*(i+1)) {
			t.Fatalf("after %d requests Today says %+v (%v)", i+1, today, err)
		}
	}
	d.Wait()
	if _, today, _ := other.Today(); today.InputTokens != 400 {
		t.Fatalf("another kin reads %+v after the writes", today)
	}
	// the ledger cannot be written (its lock cannot be taken, even by
	// root): the tallies stay counted, the next Add says why, and they
	// are written once it can be
	lock := filepath.Join(home, DayFile+".lock")
	os.Remove(lock)
	if err := os.Mkdir(lock, 0o700); err != nil {
		t.Fatal(err)
	}
	d.Add(Tally{InputTokens: 5})
	d.Wait()
	if _, today, _ := d.Today(); today.InputTokens != 405 {
		t.Fatalf("Today after a failed write: %+v", today)
	}
	if _, today, _ := other.Today(); today.InputTokens != 400 {
		t.Fatalf("another kin reads %+v while nothing can be written", today)
	}
	if err := d.Add(Tally{}); err == nil {
		t.Error("the Add after a failed write did not say so")
	}
	d.Wait()
	os.Remove(lock)
	d.Add(Tally{InputTokens: 5})
	d.Wait()
	if _, today, _ := other.Today(); today.InputTokens != 410 {
		t.Fatalf("another kin reads %+v once the folder is writable again", today)
	}
}

func TestFormats(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4200: "-4,200"} {
		if got := FormatTokens(in); got != want {
			t.Errorf("FormatTokens(%d) = %s", in, got)
		}
	}
	if got := FormatCost(0.004, "USD"); got != "0.0040 USD" {
		t.Errorf("%s", got)
	}
	if got := FormatCost(12.5, "EUR"); got != "12.50 EUR" {
		t.Errorf("%s", got)
	}
}

// Requests added from many sessions at once while the limits read the day:
// every Today is at least what was added before it, never more than what
// was added in all, and the file ends with everything.
func TestTodayAmidManyAdds(t *testing.T) {
	home := t.TempDir()
	d := OpenDay(home, nil)
	var added atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				if err := d.Add(Tally{InputTokens: 1}); err != nil {
					t.Error(err)
				}
				added.Add(1)
			}
		})
	}
	for range 30 {
		before := added.Load()
		_, today, err := d.Today()
		if err != nil || today.InputTokens < before || today.InputTokens > 200 {
			t.Fatalf("Today %+v (%v) with %d added before it", today, err, before)
		}
	}
	wg.Wait()
	d.Wait()
	if _, today, _ := OpenDay(home, nil).Today(); today.InputTokens != 200 {
		t.Fatalf("the file holds %+v, want 200 tokens", today)
	}
}
