package chat

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kin-dev/kin/rpc"
)

// Spend limits in kin chat: the session's cost in the prompt's status and
// after each turn, /usage (usage/summary of the session and the day), and
// the limit approval, which --approve-all never answers: without a person
// (piped) the turn stops at the limit.

// costText is a cost as a person reads it ("" without a currency).
func costText(v *float64, currency string) string {
	if v == nil || currency == "" {
		return ""
	}
	prec := 2
	if *v != 0 && *v < 0.01 {
		prec = 4
	}
	return strconv.FormatFloat(*v, 'f', prec, 64) + " " + cleanLine(currency)
}

// costGauge is the prompt status's word on the session's cost ("" when
// no model has a price).
func costGauge(us *rpc.Usage) string {
	if us == nil {
		return ""
	}
	return costText(us.SessionCost, us.Currency)
}

// spendLine is what contextLine adds after a turn: its cost and the
// session's, and whether counts were estimated.
func spendLine(us *rpc.Usage) string {
	var parts []string
	if c := costText(us.Cost, us.Currency); c != "" {
		parts = append(parts, "turn "+c, "session "+costText(us.SessionCost, us.Currency))
	}
	if us.Estimated {
		parts = append(parts, "estimated")
	}
	return strings.Join(parts, ", ")
}

// isLimit reports whether an ask is a spend limit's approval.
func isLimit(a ask) bool {
	ap, ok := a.(*approvalAsk)
	return ok && ap.req.Kind == rpc.KindLimit
}

// renderLimit shows a spend limit's approval: which limit, how far, and
// what each choice does.
func renderLimit(s *screen, r approvalRequest) {
	s.line(s.bold("[Spend limit]") + " " + cleanLine(r.Title))
	if r.Warning != "" {
		s.line(s.yellow(cleanLine(r.Warning)))
	}
}

// showUsage answers /usage: the session's and the day's tokens and cost,
// and each limit with what is used of it.
func (u *ui) showUsage() {
	var scopes []rpc.UsageSummaryParams
	if u.session != "" {
		scopes = append(scopes, rpc.UsageSummaryParams{Scope: "session", SessionID: u.session})
	}
	scopes = append(scopes, rpc.UsageSummaryParams{Scope: "day", SessionID: u.session})
	for _, p := range scopes {
		var res rpc.UsageSummaryResult
		if err := u.call(rpc.MethodUsageSummary, p, &res); err != nil {
			u.fail(err)
			return
		}
		u.scr.line(usageText(res))
	}
}

// usageText is one usage/summary as lines.
func usageText(res rpc.UsageSummaryResult) string {
	var b strings.Builder
	what := "This session"
	if res.Scope == "day" {
		what = "Today (" + cleanLine(res.Date) + ", every kin on this computer)"
	}
	fmt.Fprintf(&b, "%s: %s tokens (%s in, %s of them cached, %s out)", what, group(res.TotalTokens),
		group(res.InputTokens), group(res.CachedInputTokens), group(res.OutputTokens))
	if c := costText(res.Cost, res.Currency); c != "" {
		b.WriteString(", " + c)
	}
	if res.Unpriced {
		b.WriteString(" (some tokens went to a model without a price)")
	}
	if res.Estimated {
		b.WriteString(" (partly kin's estimate)")
	}
	for _, l := range res.Limits {
		used, limit := group(int64(l.Used))+" tokens", group(int64(l.Limit))+" tokens"
		if strings.HasSuffix(l.Name, "Cost") {
			used, limit = costText(&l.Used, res.Currency), costText(&l.Limit, res.Currency)
		}
		fmt.Fprintf(&b, "\n  limit %s: %s of %s", cleanLine(l.Name), used, limit)
	}
	return b.String()
}

// group writes n with a comma between each group of three digits.
func group(n int64) string {
	s := strconv.FormatInt(max(n, 0), 10)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
