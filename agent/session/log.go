package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// maxLine bounds one record; a tool output is already capped far below it.
const maxLine = 16 << 20

// Log is one session's append-only file.
type Log struct {
	path string

	// mu guards f.
	mu sync.Mutex
	f  *os.File
}

// openLog opens path for appending, creating it 0600. A log whose last line
// was cut by a crash gets a newline first, so the next record starts clean
// and the cut line is skipped on read rather than corrupting its successor.
func openLog(path string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			if _, err := f.Write([]byte("\n")); err != nil {
				f.Close()
				return nil, err
			}
		}
	}
	return &Log{path: path, f: f}, nil
}

// Append writes one record and syncs it to disk before returning.
func (l *Log) Append(r Record) error {
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("session log closed")
	}
	if _, err := l.f.Write(b); err != nil {
		return err
	}
	return l.f.Sync()
}

// Close flushes and closes the file.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Sync()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

// ReadRecords reads every whole record of a log. Lines that do not parse (a
// line cut by a crash) are skipped and counted.
func ReadRecords(path string) ([]Record, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	return readRecords(f)
}

func readRecords(r io.Reader) ([]Record, int, error) {
	var out []Record
	skipped := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil || rec.Type == "" {
			skipped++
			continue
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return out, skipped, fmt.Errorf("reading session log: %w", err)
	}
	return out, skipped, nil
}
