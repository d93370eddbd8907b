package spend

import "fmt"

// Scopes a limit counts over.
const (
	ScopeTurn    = "turn"
	ScopeSession = "session"
	ScopeDay     = "day"
)

// Limit is one of the person's limits: over a scope, of tokens or of cost.
type Limit struct {
	Scope string
	Cost  bool
	Max   float64
}

// Name is the limit's name in settings.json (turnTokens, dayCost, ...).
func (l Limit) Name() string {
	if l.Cost {
		return l.Scope + "Cost"
	}
	return l.Scope + "Tokens"
}

// Used is what t counts against the limit.
func (l Limit) Used(t Tally) float64 {
	if l.Cost {
		return t.Cost
	}
	return float64(t.Tokens())
}

// Amount writes a value of the limit's measure as a person reads it.
func (l Limit) Amount(v float64, currency string) string {
	if l.Cost {
		return FormatCost(v, currency)
	}
	return FormatTokens(int64(v)) + " tokens"
}

// Limits are the limits set over scope ("" for all), in the order kin
// checks them: the smallest scope first, tokens before cost.
func (c Config) Limits(scope string) []Limit {
	l := c.limits
	all := []Limit{
		{ScopeTurn, false, float64(l.TurnTokens)}, {ScopeTurn, true, l.TurnCost},
		{ScopeSession, false, float64(l.SessionTokens)}, {ScopeSession, true, l.SessionCost},
		{ScopeDay, false, float64(l.DayTokens)}, {ScopeDay, true, l.DayCost},
	}
	var out []Limit
	for _, x := range all {
		if x.Max > 0 && (scope == "" || x.Scope == scope) {
			out = append(out, x)
		}
	}
	return out
}

// Crossing is a limit the next request would pass: Used so far over the
// limit's scope, Held what requests already on their way are estimated to
// add (their input, until their usage is counted), Next what the request
// is estimated to add (its input).
type Crossing struct {
	Limit
	Used, Held, Next float64
}

// Cross reports whether a request adding next to used would pass l (whose
// Max may have been raised for the session).
func Cross(l Limit, used, next float64) (Crossing, bool) {
	return CrossHeld(l, used, 0, next)
}

// CrossHeld is Cross while requests on their way hold held of the limit.
func CrossHeld(l Limit, used, held, next float64) (Crossing, bool) {
	return Crossing{Limit: l, Used: used, Held: held, Next: next}, used+held+next > l.Max
}

// Raised is the limit "raise the limit for this session" sets: what is
// used and held, the next request, and the limit once more on top.
func (c Crossing) Raised(original float64) float64 {
	return c.Used + c.Held + c.Next + original
}

func (c Crossing) whose() string {
	switch c.Scope {
	case ScopeTurn:
		return "This turn"
	case ScopeSession:
		return "This session"
	}
	return "Today, kin"
}

// Title says which limit the next request would pass, in the person's
// words: what was used, the limit, and what the request adds.
func (c Crossing) Title(currency string) string {
	held, next := "", ""
	if c.Held > 0 {
		held = fmt.Sprintf("; requests on their way add about %s", c.Amount(c.Held, currency))
	}
	if c.Next > 0 {
		next = fmt.Sprintf("; the next model request adds about %s", c.Amount(c.Next, currency))
	}
	return fmt.Sprintf("%s has used %s of its limit of %s (limits.%s)%s%s", c.whose(),
		c.Amount(c.Used, currency), c.Amount(c.Max, currency), c.Name(), held, next)
}
