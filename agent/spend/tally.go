package spend

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kin-dev/kin/agent/settings"
)

// Tally is what some model requests used. InputTokens includes
// CachedInputTokens (as the services count them). Cost is in the
// configured currency and counts only requests to models with a price.
type Tally struct {
	InputTokens       int64   `json:"inputTokens"`
	CachedInputTokens int64   `json:"cachedInputTokens,omitempty"`
	OutputTokens      int64   `json:"outputTokens"`
	Cost              float64 `json:"cost,omitempty"`
	// Estimated says some of the tokens are kin's estimate: a service
	// reported no usage for a request.
	Estimated bool `json:"estimated,omitempty"`
	// Unpriced says some tokens went to a model without a price, which
	// Cost leaves out.
	Unpriced bool `json:"unpriced,omitempty"`
}

// Tokens is input and output tokens together: what token limits count.
func (t Tally) Tokens() int64 { return t.InputTokens + t.OutputTokens }

// Add adds o to t.
func (t *Tally) Add(o Tally) {
	t.InputTokens += o.InputTokens
	t.CachedInputTokens += o.CachedInputTokens
	t.OutputTokens += o.OutputTokens
	t.Cost += o.Cost
	t.Estimated = t.Estimated || o.Estimated
	t.Unpriced = t.Unpriced || o.Unpriced
}

// Unhold takes a request's hold h (its estimated input and that input's
// cost, as the limits hold it) off t.
func (t *Tally) Unhold(h Tally) {
	t.InputTokens -= h.InputTokens
	t.Cost -= h.Cost
}

// Zero reports whether nothing was used.
func (t Tally) Zero() bool { return t.Tokens() == 0 && t.Cost == 0 }

// BytesPerToken is kin's estimate of a token where a service reports none:
// about four bytes of English or code.
const BytesPerToken = 4

// Estimate is about how many tokens n bytes are (at least 1 for any bytes).
func Estimate(n int) int64 {
	if n <= 0 {
		return 0
	}
	return int64((n + BytesPerToken - 1) / BytesPerToken)
}

// Config is the person's limits and prices, checked.
type Config struct {
	limits   settings.Limits
	currency string
}

// DefaultCurrency is what prices are in when the settings name none.
const DefaultCurrency = "USD"

// NewConfig checks the settings' limits: a negative or not-a-number limit
// or price, or a cost limit without any price, is an error naming it (kin
// then sends no request until it is fixed: a limit that does not hold must
// not look as if it did).
func NewConfig(l settings.Limits) (Config, error) {
	c := Config{limits: l, currency: strings.TrimSpace(l.Currency)}
	if c.currency == "" {
		c.currency = DefaultCurrency
	}
	var bad []string
	check := func(name string, v float64) {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			bad = append(bad, name)
		}
	}
	check("turnTokens", float64(l.TurnTokens))
	check("sessionTokens", float64(l.SessionTokens))
	check("dayTokens", float64(l.DayTokens))
	check("turnCost", l.TurnCost)
	check("sessionCost", l.SessionCost)
	check("dayCost", l.DayCost)
	for id, p := range l.Prices {
		check("prices."+id+".input", p.Input)
		check("prices."+id+".cachedInput", p.CachedInput)
		check("prices."+id+".output", p.Output)
	}
	if (l.TurnCost > 0 || l.SessionCost > 0 || l.DayCost > 0) && len(l.Prices) == 0 {
		return Config{}, fmt.Errorf("settings.json limits: a cost limit needs prices (limits.prices, per model id, per million tokens)")
	}
	if len(bad) > 0 {
		return Config{}, fmt.Errorf("settings.json limits: %s must be a number of at least 0", strings.Join(dedupe(bad), ", "))
	}
	return c, nil
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// Currency is what costs are in.
func (c Config) Currency() string { return c.currency }

// Priced reports whether the model has a price.
func (c Config) Priced(model string) bool {
	_, ok := c.limits.Prices[model]
	return ok
}

// HasCostLimits reports whether any cost limit is set.
func (c Config) HasCostLimits() bool {
	return c.limits.TurnCost > 0 || c.limits.SessionCost > 0 || c.limits.DayCost > 0
}

// Charge is what one request to model used: its tokens and, when the model
// has a price, their cost. Cached input costs cachedInput where the price
// gives one, else the input price (kin never assumes a discount).
func (c Config) Charge(model string, input, cached, output int64, estimated bool) Tally {
	cached = min(max(cached, 0), input)
	t := Tally{InputTokens: input, CachedInputTokens: cached, OutputTokens: output, Estimated: estimated}
	p, ok := c.limits.Prices[model]
	if !ok {
		// Said only where some model has a price: without any, nothing
		// is priced and cost is not shown at all.
		t.Unpriced = t.Tokens() > 0 && c.HasPrices()
		return t
	}
	t.Cost = c.cost(p, input, cached, output)
	return t
}

// InputCost is what n input tokens to model would cost (0 without a price).
func (c Config) InputCost(model string, n int64) float64 {
	p, ok := c.limits.Prices[model]
	if !ok {
		return 0
	}
	return c.cost(p, n, 0, 0)
}

func (c Config) cost(p settings.Price, input, cached, output int64) float64 {
	cachedPrice := p.CachedInput
	if cachedPrice == 0 {
		cachedPrice = p.Input
	}
	return (float64(input-cached)*p.Input + float64(cached)*cachedPrice + float64(output)*p.Output) / 1e6
}

// FormatCost writes an amount as a person reads it: two decimals, four
// under one cent (so a cheap session does not show 0.00).
func FormatCost(v float64, currency string) string {
	prec := 2
	if v != 0 && math.Abs(v) < 0.01 {
		prec = 4
	}
	return strconv.FormatFloat(v, 'f', prec, 64) + " " + currency
}

// FormatTokens writes a count with a comma between each group of three
// digits (70,903).
func FormatTokens(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// HasPrices reports whether any model has a price.
func (c Config) HasPrices() bool { return len(c.limits.Prices) > 0 }
