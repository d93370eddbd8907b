package boundary

// SetProtectLimits lowers the walk's limits for a test (a workspace past
// the real ones has 200,000 files) and returns what puts them back.
func SetProtectLimits(entries, folders int) (restore func()) {
	e, f := maxEntries, maxFolders
	maxEntries, maxFolders = entries, folders
	return func() { maxEntries, maxFolders = e, f }
}
