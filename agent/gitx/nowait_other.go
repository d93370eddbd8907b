//go:build !unix

package gitx

// openNoWait is 0 where there are no FIFOs to block an open.
const openNoWait = 0
