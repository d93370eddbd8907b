package spend

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"

	"github.com/kin-dev/kin/agent/lockedfile"
)

// Holds across kin processes. Every editor window runs its own kin on one
// KIN_HOME: a request on its way in one kin must count in another's check
// of the day's limits, or two requests that each fit go out together past
// a limit. So a kin's holds on the day are in the ledger too (Holds, one
// record per kin: the total it holds now), set under the ledger's lock in
// the same step as the check (Day.Hold), so two kins checking at once see
// each other.
//
// A kin that is killed leaves its record behind, and a hold that never
// goes would narrow the day's limits for good. So each kin holds a lock on
// run/spend/<owner>.lock under KIN_HOME for as long as it runs (the kernel
// lets a dead process's lock go); a record whose owner's file can be
// locked, or is gone, is a dead kin's: it counts nothing and is dropped at
// the next write. One that cannot be told counts (the safe side).

// hold is one kin's record: what its requests on their way hold, on date.
type hold struct {
	Date  string `json:"date"`
	Tally Tally  `json:"tally"`
}

// ownerDir is where the kins' liveness locks are.
func (d *Day) ownerDir() string { return filepath.Join(filepath.Dir(d.path), "run", "spend") }

// ensureOwner makes this Day's liveness lock (d.mu held): a random name,
// locked for the life of the process.
func (d *Day) ensureOwner() error {
	if d.ownerFile != nil {
		return nil
	}
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	if err := os.MkdirAll(d.ownerDir(), lockedfile.DirMode); err != nil {
		return err
	}
	name := hex.EncodeToString(b[:])
	f, err := os.OpenFile(filepath.Join(d.ownerDir(), name+".lock"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := lockedfile.TryLock(f); err != nil {
		f.Close()
		return err
	}
	d.owner, d.ownerFile = name, f
	return nil
}

// alive reports whether the kin that wrote owner's record still runs.
func (d *Day) alive(owner string) bool {
	if owner == d.owner {
		return true
	}
	if len(owner) != 24 || !isHex(owner) {
		return false // not a name kin makes: nobody's
	}
	p := filepath.Join(d.ownerDir(), owner+".lock")
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err != nil {
		return true
	}
	defer f.Close()
	switch err := lockedfile.TryLock(f); {
	case err == nil:
		_ = lockedfile.Unlock(f)
		if !lockedfile.RemoveWhileLocked {
			f.Close()
		}
		_ = os.Remove(p)
		return false
	default: // locked by its kin, or cannot be told
		return true
	}
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

// othersHeld is what the other live kins hold on date, and drops the
// records of dead ones from l (written when l is).
func (d *Day) othersHeld(l *ledger, date string) Tally {
	var t Tally
	for owner, h := range l.Holds {
		if owner == d.owner {
			continue
		}
		if !d.alive(owner) {
			delete(l.Holds, owner)
			continue
		}
		if h.Date == date {
			t.Add(h.Tally)
		}
	}
	return t
}

// setMine puts this kin's hold t into l (none when it holds nothing),
// dated today.
func (d *Day) setMine(l *ledger, t Tally) {
	if d.owner == "" {
		return
	}
	if t.Zero() {
		delete(l.Holds, d.owner)
		return
	}
	if l.Holds == nil {
		l.Holds = map[string]hold{}
	}
	l.Holds[d.owner] = hold{Date: d.Date(), Tally: t}
}
