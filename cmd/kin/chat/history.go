package chat

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// historyMax is how many lines the history keeps: the file is cut back to
// the newest historyMax when it holds twice as many, and the editor recalls
// at most that many.
const historyMax = 1000

// history is the lines typed at kin chat's question prompt, kept across
// runs in one file ($KIN_HOME/chat_history), one line a line, newest last.
// It may hold whatever the person typed, pasted keys included, so the file
// is 0600. A line that went on in the next one (a trailing backslash, or
// Alt-Enter) is kept with its trailing backslash, so recalling it goes on
// again. Several kin chats may append at once (O_APPEND); cutting the file
// back is an atomic rename, so a line another run appends at that moment
// may be lost, never the file.
type history struct {
	path string
}

// loadHistory reads the file (absent is empty) and cuts it back when it
// has grown past twice the cap.
func loadHistory(path string) (*history, []string) {
	h := &history{path: path}
	if path == "" {
		return h, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return h, nil
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if l := sc.Text(); strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if n := len(lines); n > historyMax {
		lines = lines[n-historyMax:]
		if n > 2*historyMax {
			h.rewrite(lines)
		}
	}
	return h, lines
}

// add appends one line.
func (h *history) add(line string) {
	if h.path == "" || strings.ContainsAny(line, "\r\n") {
		return
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return
	}
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	// A file made by an older kin, or by hand, is narrowed to 0600 too.
	_ = f.Chmod(0o600)
	_, _ = f.WriteString(line + "\n")
	f.Close()
}

func (h *history) rewrite(lines []string) {
	tmp, err := os.CreateTemp(filepath.Dir(h.path), ".chat_history-*")
	if err != nil {
		return
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing to remove
	w := bufio.NewWriter(tmp)
	for _, l := range lines {
		w.WriteString(l + "\n")
	}
	if w.Flush() != nil || tmp.Chmod(0o600) != nil || tmp.Close() != nil {
		tmp.Close()
		return
	}
	_ = os.Rename(tmp.Name(), h.path)
}
