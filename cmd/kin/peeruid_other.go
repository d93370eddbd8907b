//go:build !linux

package main

import (
	"errors"
	"net"
)

// peerCheckSupported: elsewhere kin has no dependable way to learn who owns
// the other end of a TCP connection (macOS and Windows would need their own
// socket tables), so kin serve --listen refuses to start there unless
// --any-local-user says every local user may use the port.
const peerCheckSupported = false

func checkPeer(net.Conn) error { return errors.ErrUnsupported }
