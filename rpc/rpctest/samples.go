package rpctest

import (
	"slices"
	"testing"
	"time"
)

// Samples collects one measurement per operation of a benchmark and reports
// their median, so that one slow run (a GC, a cold cache, a busy neighbour)
// does not move the number, and a per-iteration value is never mistaken for
// the last one.
type Samples []time.Duration

// Add records one operation.
func (s *Samples) Add(d time.Duration) { *s = append(*s, d) }

// Since records the time from start to now.
func (s *Samples) Since(start time.Time) { s.Add(time.Since(start)) }

// Median is the middle sample (0 without samples).
func (s Samples) Median() time.Duration {
	if len(s) == 0 {
		return 0
	}
	c := slices.Clone(s)
	slices.Sort(c)
	if len(c)%2 == 1 {
		return c[len(c)/2]
	}
	return (c[len(c)/2-1] + c[len(c)/2]) / 2
}

// Report reports the median in milliseconds under unit (for example
// "ms/turn-to-delta").
func (s Samples) Report(b *testing.B, unit string) {
	b.Helper()
	b.ReportMetric(float64(s.Median().Nanoseconds())/1e6, unit)
}

// ReportMicros reports the median in microseconds under unit.
func (s Samples) ReportMicros(b *testing.B, unit string) {
	b.Helper()
	b.ReportMetric(float64(s.Median().Nanoseconds())/1e3, unit)
}
