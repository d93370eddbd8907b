//go:build !linux

package sandbox

// ownerAlive reports whether the kin that wrote the marker name (named by
// its pid) may still run. Without /proc a process's start cannot be read:
// any process with the pid counts, so a killed kin's placeholders stay
// while another process has its pid (they are empty).
func ownerAlive(pid int, _ string) bool { return processAlive(pid) }
