package boundary

import "time"

// SetProtectLimits lowers the walk's limits for a test (a workspace past
// the real ones has 200,000 files) and returns what puts them back.
func SetProtectLimits(entries, folders int) (restore func()) {
	e, f := maxEntries, maxFolders
	maxEntries, maxFolders = entries, folders
	return func() { maxEntries, maxFolders = e, f }
}

// SetRacyMargin sets how old a folder's (or an index's) times must be for
// the walk to reuse what it read, and returns what puts it back.
func SetRacyMargin(d time.Duration) (restore func()) {
	m := racyMargin
	racyMargin = d
	return func() { racyMargin = m }
}
