package spend

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
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
type Day struct {
	path string
	now  func() time.Time
}

// ledger is usage.json's content.
type ledger struct {
	// Days are tallies by date (2006-01-02, local time).
	Days map[string]Tally `json:"days"`
}

// OpenDay is the ledger under home; now is the clock (nil: time.Now).
func OpenDay(home string, now func() time.Time) *Day {
	if now == nil {
		now = time.Now
	}
	return &Day{path: filepath.Join(home, DayFile), now: now}
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

// Add adds t to today's tally and returns today's tally with it.
func (d *Day) Add(t Tally) (Tally, error) {
	date := d.Date()
	var today Tally
	err := lockedfile.Update(d.path, func(data []byte, _ bool) ([]byte, error) {
		l, err := parseLedger(d.path, data)
		if err != nil {
			return nil, err
		}
		today = l.Days[date]
		today.Add(t)
		l.Days[date] = today
		prune(l.Days, d.now())
		return json.MarshalIndent(l, "", "  ")
	})
	return today, err
}

// Today is today's tally as the ledger holds it now (what every kin added).
func (d *Day) Today() (string, Tally, error) {
	date := d.Date()
	data, err := os.ReadFile(d.path)
	if errors.Is(err, fs.ErrNotExist) {
		return date, Tally{}, nil
	}
	if err != nil {
		return date, Tally{}, fmt.Errorf("kin cannot read its day's usage in %s: %v", d.path, err)
	}
	l, err := parseLedger(d.path, data)
	if err != nil {
		return date, Tally{}, err
	}
	return date, l.Days[date], nil
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
