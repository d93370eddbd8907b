package boundary

import (
	"testing"
	"time"
)

// A folder changed within the margin of the walk that read it is read
// again next time, however little its times moved; one changed before it
// is reused.
func TestARacilyCleanFolderIsReadAgain(t *testing.T) {
	now := time.Now()
	at := func(d time.Duration) int64 { return now.Add(d).UnixNano() }
	for _, c := range []struct {
		ctime, mtime time.Duration
		want         bool
	}{
		{-racyMargin / 2, -2 * racyMargin, false},
		{-2 * racyMargin, -racyMargin / 2, false},
		{-2 * racyMargin, time.Hour, false}, // an mtime set ahead
		{-2 * racyMargin, -2 * racyMargin, true},
	} {
		s := dirStamp{ctime: at(c.ctime), mtime: at(c.mtime)}
		if got := s.trusted(now); got != c.want {
			t.Errorf("ctime %v ago, mtime %v ago: trusted %v, want %v", -c.ctime, -c.mtime, got, c.want)
		}
	}
}
