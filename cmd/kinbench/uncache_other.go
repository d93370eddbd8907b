//go:build !linux

package main

// uncache does nothing where there is no posix_fadvise to ask with.
func uncache(string) {}
