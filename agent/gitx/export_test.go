package gitx

import "time"

// SmallFile and BeforeOpen expose smallFile and its test hook.
var SmallFile = smallFile

func SetBeforeOpen(f func(string)) func() {
	old := beforeOpen
	beforeOpen = f
	return func() { beforeOpen = old }
}

// SetStallAfter sets how soon run looks for a FIFO git waits on.
func SetStallAfter(d time.Duration) func() {
	old := stallAfter
	stallAfter = d
	return func() { stallAfter = old }
}

// SetAfterList sets the hook Command calls between listing the
// repository's keys and starting git: the race window.
func SetAfterList(f func(dir string)) func() {
	old := afterList
	afterList = f
	return func() { afterList = old }
}

// CanLookIntoGit reports whether the FIFO watch sees what a git waits on
// (or, false, takes a FIFO it may wait on for one it does).
var CanLookIntoGit = canLookInto
