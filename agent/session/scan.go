package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// maxLine is the longest line a reader takes. kin writes nothing longer
// than MaxRecord; a longer line (a foreign file, an older kin) is skipped
// and counted, never an error.
const maxLine = 64 << 20

// eachLine calls fn for every non-empty line of r, with the offset where it
// starts (start is the offset of r's first byte) and its length including
// the newline. line is only valid during the call. A line over maxLine is
// skipped. A last line without a newline is passed too: it may be a record
// whose newline was lost, or a cut line that will not parse.
func eachLine(r io.Reader, start int64, fn func(off int64, line []byte)) (skipped int, err error) {
	br := bufio.NewReaderSize(r, 256<<10)
	off, lineStart := start, start
	var long []byte // a line longer than the buffer, gathered
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		off += int64(len(chunk))
		if errors.Is(err, bufio.ErrBufferFull) {
			if !tooLong && len(long)+len(chunk) > maxLine {
				tooLong, long = true, nil
			} else if !tooLong {
				long = append(long, chunk...)
			}
			continue
		}
		line := chunk
		if long != nil && !tooLong {
			if len(long)+len(chunk) > maxLine {
				tooLong = true
			} else {
				line = append(long, chunk...)
			}
		}
		switch {
		case tooLong:
			skipped++
		case len(bytes.TrimSpace(line)) > 0:
			fn(lineStart, line)
		}
		long, tooLong, lineStart = nil, false, off
		if err == io.EOF {
			return skipped, nil
		}
		if err != nil {
			return skipped, fmt.Errorf("reading session log: %w", err)
		}
	}
}

// parse decodes one line; ok is false for a line that is not a record.
func parse(line []byte, r *Record) bool {
	*r = Record{}
	return json.Unmarshal(line, r) == nil && r.Type != ""
}

// ReadRecords reads every record of a log. Lines that do not parse (a line
// cut by a crash, a foreign line, one over the reader's limit) are skipped
// and counted.
func ReadRecords(path string) ([]Record, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var out []Record
	bad := 0
	skipped, err := eachLine(f, 0, func(_ int64, line []byte) {
		var r Record
		if !parse(line, &r) {
			bad++
			return
		}
		out = append(out, r)
	})
	return out, skipped + bad, err
}
