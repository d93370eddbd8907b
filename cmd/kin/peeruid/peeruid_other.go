//go:build !linux

// Package peeruid: see peeruid_linux.go.
package peeruid

import (
	"errors"
	"net"
)

// Supported: elsewhere kin has no dependable way to learn who owns
// the other end of a TCP connection (macOS and Windows would need their own
// socket tables), so kin serve --listen refuses to start there unless
// --any-local-user says every local user may use the port.
const Supported = false

// ErrNotHeld is never returned here; it is kept for the callers' sake.
var ErrNotHeld = errors.New("the socket at the other end is held by no process")

// Check cannot tell here: errors.ErrUnsupported.
func Check(net.Conn) error { return errors.ErrUnsupported }
