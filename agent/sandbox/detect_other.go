//go:build !linux && !darwin

package sandbox

import "runtime"

// There is no command sandbox for this system (Windows, the BSDs): every
// command runs unconfined, which Status says.
func detect(Config) (mechanism, unavailable) {
	return nil, unavailable{reason: "kin has no command sandbox on " + runtime.GOOS}
}

func expect(cfg Config) (string, unavailable) {
	_, why := detect(cfg)
	return "", why
}
