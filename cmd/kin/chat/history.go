package chat

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"

	"github.com/kin-dev/kin/agent/lockedfile"
)

// historyMax is how many questions the history keeps: the file is cut
// back to the newest historyMax when it holds twice as many, and the editor
// recalls at most that many.
const historyMax = 1000

// historyEntryMax bounds one entry: a longer question (a big paste) is sent
// but not kept.
const historyEntryMax = 16 << 10

// histNewline stands for a line break inside one history entry: a
// multi-line question is kept, and recalled, as one entry, its lines joined
// by it ("line one⏎line two"); a recalled entry sent as it is (or edited)
// goes as the lines it stands for. The editor shows it as it is: one row,
// one glyph per break.
const histNewline = "⏎"

// historyEntry is a question as the history keeps it.
func historyEntry(question string) string {
	return strings.ReplaceAll(question, "\n", histNewline)
}

// fromHistory is the question a (recalled) entry stands for.
func fromHistory(entry string) string {
	return strings.ReplaceAll(entry, histNewline, "\n")
}

// history is the questions typed at kin chat's question prompt, kept
// across runs in one file ($KIN_HOME/chat_history), one question a line
// (its line breaks as histNewline), newest last. It may hold whatever the
// person typed, pasted keys included, so the file is 0600. A file written
// by an older kin kept each line of a multi-line question on its own, all
// but the last with a trailing backslash: those are read back as the one
// question they were. Several kin chats may append at once (O_APPEND);
// cutting the file back is an atomic rename, so an entry another run
// appends at that moment may be lost, never the file.
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
	var cont []string // an older kin's lines of one question so far
	for sc.Scan() {
		l := sc.Text()
		if strings.TrimSpace(l) == "" {
			continue
		}
		if strings.HasSuffix(l, `\`) {
			cont = append(cont, strings.TrimSuffix(l, `\`))
			continue
		}
		if cont != nil {
			l = strings.Join(append(cont, l), histNewline)
			cont = nil
		}
		lines = append(lines, l)
	}
	if cont != nil {
		lines = append(lines, strings.Join(cont, histNewline))
	}
	if n := len(lines); n > historyMax {
		lines = lines[n-historyMax:]
		if n > 2*historyMax {
			h.rewrite(lines)
		}
	}
	return h, lines
}

// add appends one entry (see historyEntry).
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
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	_ = lockedfile.ReplaceFile(h.path, []byte(b.String()), lockedfile.Options{Perm: 0o600})
}
