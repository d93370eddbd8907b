//go:build !unix

package boundary

// openNonBlock is 0 where there are no FIFOs to block an open.
const openNonBlock = 0
