//go:build !linux

package reaper

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// Without /proc and a subreaper there is nothing to track: the caller's
// process-group handling is all there is.

// Enable reports that this system has no child subreaper.
func Enable() error { return errors.ErrUnsupported }

// Owner is one program kin started.
type Owner struct{}

// NewOwner returns an owner.
func NewOwner(tagged bool) *Owner { return &Owner{} }

// Env returns env unchanged.
func (o *Owner) Env(env []string) []string { return env }

// Started does nothing.
func (o *Owner) Started(*os.Process) {}

// Snapshot does nothing.
func (o *Owner) Snapshot() {}

// Signal signals nothing.
func (o *Owner) Signal(syscall.Signal) int { return 0 }

// Alive reports false.
func (o *Owner) Alive() bool { return false }

// Stop does nothing.
func (o *Owner) Stop(time.Duration) {}

// Shutdown does nothing.
func Shutdown(time.Duration) {}

// ProcState needs /proc; ok is always false here.
func ProcState(int) (state byte, pgrp int, ok bool) { return 0, 0, false }

// EndGroup does nothing.
func (o *Owner) EndGroup(time.Duration) {}
