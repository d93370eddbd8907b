package spend

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/kin-dev/kin/agent/lockedfile"
)

// DayFile is the day's ledger's name under $KIN_HOME.
const DayFile = "usage.json"

// keepDays is how many days the ledger keeps (older ones are dropped when
// it is written).
const keepDays = 62

// Day is the ledger of what every kin on this machine used, per day (the
// person's local date): each request's tally is added under the file's
// lock, so two kin processes add up.
//
// Add (or Release, for a request that held against the day's limits)
// runs after every model request, inside the turn, and writing the file
// (locked, synced, replaced) costs 1.5-3 ms on a disk; so they only
// count the tally in memory and one writer per Day writes what is
// pending in the background, several requests' tallies in one write when
// they come quickly. Today waits for a write under way, so it counts
// every tally once: the file's, and what is not written yet. Wait is for
// the end of a process (Service.Shutdown): what is pending then is
// written before it exits.
type Day struct {
	path string
	now  func() time.Time

	mu      sync.Mutex
	idle    sync.Cond
	pending map[string]Tally // by date, not written yet
	busy    bool             // the writer is running
	readers int              // Todays waiting: the writer ends after its batch
	err     error            // the last write's failure, for the next Add

	// this kin's holds on the day, recorded in the ledger (holds.go):
	// owner names its record and ownerFile is its liveness lock (both
	// made by the first Hold); held is what its requests on their way
	// hold, heldDirty that the record is not written as it is now
	owner     string
	ownerFile *os.File
	held      Tally
	heldDirty bool
}

// ledger is usage.json's content.
type ledger struct {
	// Days are tallies by date (2006-01-02, local time).
	Days map[string]Tally `json:"days"`
	// Holds are what each running kin's requests on their way hold, by
	// the kin's owner name (holds.go).
	Holds map[string]hold `json:"holds,omitempty"`
}

// OpenDay is the ledger under home; now is the clock (nil: time.Now).
func OpenDay(home string, now func() time.Time) *Day {
	if now == nil {
		now = time.Now
	}
	d := &Day{path: filepath.Join(home, DayFile), now: now, pending: map[string]Tally{}}
	d.idle.L = &d.mu
	return d
}

// Path is where the ledger lives.
func (d *Day) Path() string { return d.path }

// Date is today's date as the ledger keys it.
func (d *Day) Date() string { return d.now().Format(time.DateOnly) }

func parseLedger(path string, data []byte) (ledger, error) {
	var l ledger
	if len(data) > 0 {
		if err := json.Unmarshal(data, &l); err != nil {
			return l, fmt.Errorf("kin cannot read its day's usage in %s (%v); fix or delete the file", path, err)
		}
	}
	if l.Days == nil {
		l.Days = map[string]Tally{}
	}
	return l, nil
}

// Add adds t to today's tally: counted at once (Today sees it), written
// in the background. It returns why the last write failed, once (the
// tallies it held stay pending, counted, and are written with the next).
func (d *Day) Add(t Tally) error {
	date := d.Date()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.addPending(date, t)
	err := d.err
	d.err = nil
	if !d.busy {
		d.busy = true
		go d.write()
	}
	return err
}

// addPending counts t on date, to be written (d.mu held).
func (d *Day) addPending(date string, t Tally) {
	p := d.pending[date]
	p.Add(t)
	d.pending[date] = p
}

// write writes what is pending until nothing is, then ends.
func (d *Day) write() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for (len(d.pending) > 0 || d.heldDirty) && d.readers == 0 {
		batch := d.pending
		d.pending = map[string]Tally{}
		mine, dirty := d.held, d.heldDirty
		d.heldDirty = false
		d.mu.Unlock()
		// synced before the rename, so the file is never torn, but not the
		// rename itself: a power cut may keep the previous file, losing
		// the last requests' tally (one sync a request, not two)
		err := lockedfile.UpdateWith(d.path, lockedfile.Options{Perm: lockedfile.FileMode, Sync: true}, func(data []byte, _ bool) ([]byte, error) {
			l, err := parseLedger(d.path, data)
			if err != nil {
				return nil, err
			}
			addDays(l.Days, batch)
			prune(l.Days, d.now())
			if dirty {
				d.othersHeld(&l, "") // drops dead kins' records
				d.setMine(&l, mine)
			}
			return json.MarshalIndent(l, "", "  ")
		})
		d.mu.Lock()
		if err != nil {
			d.heldDirty = d.heldDirty || dirty
			addDays(d.pending, batch) // kept, counted, and tried again with the next Add
			d.err = err
			break
		}
	}
	d.busy = false
	d.idle.Broadcast()
}

// Wait returns once nothing is being written.
func (d *Day) Wait() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.waitIdle()
}

// waitIdle waits until nothing is being written (d.mu held).
func (d *Day) waitIdle() {
	for d.busy {
		d.idle.Wait()
	}
}

// Close is for the end of a process (Service.Shutdown): it waits for what
// is being written (Wait) and gives up this kin's liveness file, which
// nothing else would remove once its record is let go (only a record's
// owner is looked at). A record still in the ledger (a hold whose release
// could not be written) is then a dead kin's: it counts nothing, and the
// next write drops it. A later Hold makes a new liveness file.
func (d *Day) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.waitIdle()
	if d.ownerFile == nil {
		return
	}
	// closed first (Windows removes no open file); another kin finding it
	// unlocked meanwhile takes the record for a dead kin's, as it now is
	_ = d.ownerFile.Close()
	_ = os.Remove(filepath.Join(d.ownerDir(), d.owner+".lock"))
	d.owner, d.ownerFile = "", nil
	d.held, d.heldDirty = Tally{}, false
}

// Today is today's tally: what the ledger holds now (what every kin
// added) and what this process has not written yet.
func (d *Day) Today() (string, Tally, error) {
	date, t, _, err := d.TodayHeld()
	return date, t, err
}

// TodayHeld is Today and what the other running kins' requests on their
// way hold today (this kin's own are its caller's to count).
func (d *Day) TodayHeld() (string, Tally, Tally, error) {
	date := d.Date()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.waitWriter()
	defer d.kick()
	today := d.pending[date]
	data, err := os.ReadFile(d.path)
	if errors.Is(err, fs.ErrNotExist) {
		return date, today, Tally{}, nil
	}
	if err != nil {
		return date, Tally{}, Tally{}, fmt.Errorf("kin cannot read its day's usage in %s: %v", d.path, err)
	}
	l, err := parseLedger(d.path, data)
	if err != nil {
		return date, Tally{}, Tally{}, err
	}
	t := l.Days[date]
	t.Add(today)
	return date, t, d.othersHeld(&l, date), nil
}

// Hold checks a request against the day's limits and holds its estimate
// next, as one step for every kin on this KIN_HOME: under the ledger's
// lock, fits gets today's tally (every kin's, and what this one has not
// written yet) and what the other running kins hold; when the request
// fits, next is added to this kin's hold and written with what is pending.
// It reports whether the request fit. Release takes the hold off (and
// adds what the request used).
func (d *Day) Hold(next Tally, fits func(used, othersHeld Tally) bool) (bool, error) {
	date := d.Date()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.waitWriter() // and while d.mu is held no other write of this Day starts
	defer d.kick()
	if err := d.ensureOwner(); err != nil {
		return false, fmt.Errorf("kin cannot record its requests on their way in %s: %v", d.ownerDir(), err)
	}
	ok := false
	batch := d.pending
	// synced as every write of the ledger is: a file torn by a power cut
	// would stop every request until the person fixes it
	err := lockedfile.UpdateWith(d.path, lockedfile.Options{Perm: lockedfile.FileMode, Sync: true}, func(data []byte, _ bool) ([]byte, error) {
		l, err := parseLedger(d.path, data)
		if err != nil {
			return nil, err
		}
		used := l.Days[date]
		used.Add(batch[date])
		if ok = fits(used, d.othersHeld(&l, date)); !ok {
			return nil, nil
		}
		addDays(l.Days, batch)
		prune(l.Days, d.now())
		held := d.held
		held.Add(next)
		d.setMine(&l, held)
		return json.MarshalIndent(l, "", "  ")
	})
	if err != nil {
		return false, err
	}
	if ok {
		d.held.Add(next)
		d.pending = map[string]Tally{}
		d.heldDirty = false
	}
	return ok, nil
}

// Release takes a request's hold next (Hold) off this kin's and adds
// used, what the request used, to today's tally (zero when it was counted
// with Add): both go in one write of the ledger, in the background, so
// another kin sees the hold or the usage, never both (a limit's question
// too early) and never neither (room that is not there). It returns why
// the last write failed, once, as Add does.
func (d *Day) Release(next, used Tally) error {
	date := d.Date()
	d.mu.Lock()
	defer d.mu.Unlock()
	if !used.Zero() {
		d.addPending(date, used)
	}
	d.held.Unhold(next)
	if d.held.InputTokens <= 0 {
		d.held = Tally{} // and whatever a float's rounding left of the cost
	}
	d.heldDirty = true
	err := d.err
	d.err = nil
	d.kick()
	return err
}

// waitWriter waits for the batch being written (d.mu held): it is in
// neither the file nor pending. It waits for that one and no more (the
// writer stops after it, so many requests added meanwhile cannot keep a
// reader waiting); what is pending then is the reader's to count, and is
// written after (kick).
func (d *Day) waitWriter() {
	d.readers++
	for d.busy {
		d.idle.Wait()
	}
	d.readers--
}

// addDays adds the tallies of batch to days, date by date.
func addDays(days, batch map[string]Tally) {
	for date, t := range batch {
		day := days[date]
		day.Add(t)
		days[date] = day
	}
}

// kick starts the writer when something waits to be written (d.mu held).
func (d *Day) kick() {
	if (len(d.pending) > 0 || d.heldDirty) && !d.busy && d.readers == 0 {
		d.busy = true
		go d.write()
	}
}

// prune drops all but the keepDays newest days (by date, up to today).
func prune(days map[string]Tally, now time.Time) {
	oldest := now.AddDate(0, 0, -keepDays).Format(time.DateOnly)
	var dates []string
	for k := range days {
		dates = append(dates, k)
	}
	sort.Strings(dates)
	for _, k := range dates {
		if k < oldest {
			delete(days, k)
		}
	}
}
