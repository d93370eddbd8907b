//go:build race

package rpc_test

// raceEnabled: the race detector makes JSON of many megabytes slow, so the
// tests that move such frames use smaller ones under it.
const raceEnabled = true
