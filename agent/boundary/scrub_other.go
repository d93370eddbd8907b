//go:build !linux

package boundary

// ScrubEnviron does nothing outside Linux: on macOS a process of the same
// user can still read kin's environment (ps eww); README says so.
func ScrubEnviron(names []string) ([]string, error) { return nil, nil }
