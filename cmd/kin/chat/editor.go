package chat

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/ergochat/readline"

	"github.com/kin-dev/kin/rpc"
)

// editor is kin chat's line editor at a terminal: github.com/ergochat/readline
// (the maintained fork of chzyer/readline: Emacs keys, Home/End, word moves,
// kill and yank, Ctrl-R search, history, completion, output written while a
// line is edited). Around it, kin chat keeps:
//   - the terminal raw for the whole session, and a keyReader between the
//     terminal and the editor (keys.go);
//   - one read under way at a time, asked for by the UI goroutine with the
//     prompt it needs (a question, or the current approval or form field),
//     ended early when the UI needs another prompt: the line typed so far
//     comes back as a draft and is offered again at the next question
//     prompt, and keys typed before a question appeared never answer it;
//   - history across runs ($KIN_HOME/chat_history, 0600, history.go), a
//     multi-line question kept and recalled as one entry;
//   - multi-line questions: a line ending in a backslash, Alt-Enter, or a
//     newline inside a paste goes on in the next line, under a "…" prompt.
type editor struct {
	rl     *readline.Instance
	tty    *tty
	in     *feed
	scr    *screen
	hist   *history
	comp   *completer
	events chan editEvent
	reqs   chan readSpec

	// The UI goroutine's.
	seq        int
	out        *readSpec // the read under way
	cancelling bool

	mu      sync.Mutex // guards prompt, started, line: the UI's and the editor's goroutines share them
	prompt  string     // the prompt of the read under way
	started bool       // it is on screen (the editor has it)
	line    []rune     // the line as last edited

	// escKey: the read under way ends at a lone Esc (set by the editor
	// goroutine, read by the key reader's).
	escKey atomic.Bool
	// reading is the read under way's seq (set by the editor goroutine,
	// read where the editor asks the terminal where its cursor is).
	reading atomic.Int64

	// The editor goroutine's (the input filter and the listener run on it).
	cur    readSpec
	action rune // a private key the listener is to carry out
	how    int  // how the line under way ends
	draft  string
	// unseen: the read is an ask's, and the terminal has not shown it yet
	// (keyShown). Until then it takes no key: what was typed before the
	// person could see the question (a line typed for the question prompt,
	// the rest of a paste) never answers it. A question's read takes every
	// key.
	unseen bool
}

// readSpec is a read the UI wants.
type readSpec struct {
	seq    int
	ask    string // the ask it answers; "" for a question
	base   string // what the prompt asks; a read for another base is ended
	prompt string // the prompt shown: base, maybe after a status that changes as it waits
	draft  string // the line to start from
	esc    bool   // a lone Esc ends it (howEscape): a template's value
}

// editEvent is what the editor tells the UI.
type editEvent struct {
	kind int // evLine, evInterrupt, evEOF
	seq  int
	text string
	how  int
}

const (
	evLine = iota
	evInterrupt
	evEOF
)

// How a line ended.
const (
	howEnter   = iota
	howNewline // Alt-Enter: the question goes on
	howPaste   // a newline inside a paste: the same
	howCancel  // ended by the UI; text is the draft
	howEscape  // Esc, at a read that takes it (readSpec.esc)
	howJoin    // inside a long pasted line: the line goes on in the next read
)

// newEditor takes over the terminal. in and out must be the terminal.
func newEditor(in, out *os.File, historyFile, cwd string, scr *screen) (*editor, error) {
	t, err := openTTY(in, out)
	if err != nil {
		return nil, err
	}
	hist, lines := loadHistory(historyFile)
	e := &editor{
		tty:    t,
		in:     newFeed(),
		scr:    scr,
		hist:   hist,
		comp:   newCompleter(cwd),
		events: make(chan editEvent, 4),
		reqs:   make(chan readSpec, 1),
	}
	cq := &cursorQuery{w: out, feed: e.in, seq: func() int { return int(e.reading.Load()) }}
	e.rl, err = readline.NewFromConfig(&readline.Config{
		Stdin:                  e.in,
		Stdout:                 cq,
		Stderr:                 cq,
		HistoryLimit:           historyMax,
		DisableAutoSaveHistory: true,
		HistorySearchFold:      true,
		AutoComplete:           e.comp,
		Listener:               e.listen,
		FuncFilterInputRune:    e.filter,
		FuncIsTerminal:         func() bool { return true },
		FuncMakeRaw:            t.raw,
		FuncExitRaw:            func() error { return nil },
		FuncGetSize:            t.size,
		InterruptPrompt:        "\n",
		EOFPrompt:              "\n",
		Undo:                   true,
	})
	if err != nil {
		t.restore()
		return nil, err
	}
	for _, l := range lines {
		_ = e.rl.SaveToHistory(l)
	}
	scr.w, scr.live, scr.width = e.rl.Stdout(), true, t.width
	scr.height = func() int { _, h := t.size(); return h }
	_, _ = io.WriteString(out, "\x1b[?2004h") // bracketed paste
	kr := &keyReader{out: e.in, answer: cq.answer, escKey: e.escKey.Load}
	kr.suspend = func() {
		t.suspend(func() { _, _ = io.WriteString(out, "\x1b[?2004l") }, func() {
			_, _ = io.WriteString(out, "\x1b[?2004h")
			scr.echoed() // the shell wrote below: nothing goes back up
			e.rl.Refresh()
		})
	}
	kr.interrupt = func() bool {
		e.mu.Lock()
		reading := e.started
		e.mu.Unlock()
		if reading {
			return false
		}
		e.events <- editEvent{kind: evInterrupt}
		return true
	}
	go e.readKeys(in, kr)
	go e.loop()
	return e, nil
}

func (e *editor) readKeys(in *os.File, kr *keyReader) {
	buf := make([]byte, 4096)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			kr.write(buf[:n])
		}
		if err != nil {
			e.in.close()
			return
		}
	}
}

// close gives the terminal back, without the prompt of a read under way.
// The key reader stays blocked on the terminal until the process exits.
func (e *editor) close() {
	if e.out != nil {
		e.stop()
		seq := e.out.seq
		timer := time.NewTimer(time.Second)
		defer timer.Stop()
	wait:
		for {
			select {
			case ev := <-e.events:
				if ev.seq == seq && ev.kind != evInterrupt {
					break wait
				}
			case <-timer.C:
				break wait
			}
		}
	}
	e.in.close()
	_ = e.rl.Close()
	close(e.reqs)
	_, _ = io.WriteString(e.tty.out, "\x1b[?2004l")
	e.tty.restore()
}

// ---- the UI goroutine's side ----

// want makes sure the read under way is spec's, ending another one first.
// It reports whether it started spec's (and so took its draft).
func (e *editor) want(spec readSpec) bool {
	switch {
	case e.out == nil:
		e.seq++
		spec.seq = e.seq
		e.out = &spec
		e.mu.Lock()
		e.prompt, e.started, e.line = spec.prompt, false, []rune(spec.draft)
		e.mu.Unlock()
		e.reqs <- spec
		return true
	case e.out.ask != spec.ask || e.out.base != spec.base:
		e.stop()
	case e.out.prompt != spec.prompt:
		e.setPrompt(spec.prompt)
	}
	return false
}

// stop ends the read under way, if any.
func (e *editor) stop() {
	if e.out == nil || e.cancelling {
		return
	}
	e.cancelling = true
	s := rune(e.out.seq & seqMask)
	e.in.putRunes(keyClear+s, keyCancel+s)
}

// setPrompt changes the prompt on screen, where the editor can redraw it
// in place: when the old and the new prompt, each with the line, fit in one
// row. Otherwise the next read shows it.
func (e *editor) setPrompt(p string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	w, line := e.scr.width(), string(e.line)
	if advance(0, e.prompt+line, w) >= w || advance(0, p+line, w) >= w || strings.ContainsRune(e.prompt+p, '\n') {
		return
	}
	e.prompt, e.out.prompt = p, p
	if !e.started {
		return
	}
	cfg := e.rl.GetConfig()
	cfg.Prompt = p
	_ = e.rl.SetConfig(cfg)
	e.rl.Refresh()
}

// ended takes the end of a read: it returns the read's spec.
func (e *editor) ended(seq int) (readSpec, bool) {
	if e.out == nil || e.out.seq != seq {
		return readSpec{}, false
	}
	spec := *e.out
	e.out, e.cancelling = nil, false
	return spec, true
}

// ---- the editor goroutine's side ----

func (e *editor) loop() {
	for spec := range e.reqs {
		e.cur, e.action, e.how, e.draft = spec, 0, howEnter, ""
		e.unseen = spec.ask != ""
		e.reading.Store(int64(spec.seq))
		e.mu.Lock()
		cfg := e.rl.GetConfig()
		cfg.Prompt = e.prompt
		_ = e.rl.SetConfig(cfg)
		e.started = true
		e.mu.Unlock()
		if spec.draft != "" {
			e.rl.SetDefault(spec.draft)
		}
		e.escKey.Store(spec.esc)
		line, err := e.rl.ReadLine()
		e.escKey.Store(false)
		e.mu.Lock()
		e.started = false
		prompt := e.prompt
		e.mu.Unlock()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			e.events <- editEvent{kind: evInterrupt, seq: spec.seq}
			e.events <- editEvent{kind: evLine, seq: spec.seq, how: howCancel}
			continue
		case err != nil:
			e.events <- editEvent{kind: evEOF, seq: spec.seq}
			continue
		}
		if e.how == howCancel {
			// Nothing of the line is left on screen but its prompt (the
			// line was cleared first): take that away too.
			e.scr.mu.Lock()
			if rows := promptRows(prompt, e.tty.width()); rows < 8 {
				fmt.Fprintf(e.tty.out, "\x1b[%dA\r\x1b[J", rows)
			}
			e.scr.mu.Unlock()
			e.events <- editEvent{kind: evLine, seq: spec.seq, how: howCancel, text: e.draft}
			continue
		}
		e.events <- editEvent{kind: evLine, seq: spec.seq, how: e.how, text: line}
	}
}

// remember keeps a whole question (all its lines) as one history entry,
// in this run and the file. The UI calls it once the question is complete,
// between reads (the editor's goroutine is then waiting for the next one).
func (e *editor) remember(question string) {
	entry := historyEntry(question)
	if strings.TrimSpace(entry) == "" || len(entry) > historyEntryMax {
		return
	}
	_ = e.rl.SaveToHistory(entry)
	e.hist.add(entry)
}

// filter sees every key before the editor does.
func (e *editor) filter(r rune) (rune, bool) {
	mine := func(base rune) bool {
		return r >= base && r <= base+seqMask && int(r-base) == e.cur.seq&seqMask
	}
	switch {
	case r >= keyShown && r <= keyShown+seqMask:
		e.unseen = e.unseen && !mine(keyShown)
		return 0, false
	case e.unseen && r != keyInterrupt && !mine(keyClear) && !mine(keyCancel):
		// Typed before the ask was on screen (Ctrl-C still counts: it
		// only ever refuses, and the UI's own keys end the read).
		return 0, false
	case r == '\r' || r == '\n':
		e.scr.echoed()
		e.how = howEnter
	case r == keyNewline, r == keyPasteNewline:
		e.scr.echoed()
		e.how = howNewline
		if r == keyPasteNewline {
			e.how = howPaste
		}
		return readline.CharEnter, true
	case r == keyPasteJoin:
		if e.cur.ask != "" {
			return 0, false // an answer is one line, however long
		}
		e.scr.echoed()
		e.how = howJoin
		return readline.CharEnter, true
	case r == keyInterrupt:
		e.action = keyInterrupt
		return readline.CharBell, true
	case r == keyEscape:
		e.scr.echoed()
		e.how = howEscape
		return readline.CharEnter, true
	case r == keyDeleteWord:
		return readline.MetaDelete, true
	case r == keyBackspaceWord:
		return readline.MetaBackspace, true
	case r == readline.CharEOT, r == readline.CharCtrlL:
		e.scr.echoed()
	case mine(keyClear):
		e.action = keyClear
		return readline.CharBell, true
	case mine(keyCancel):
		e.how = howCancel
		return readline.CharEnter, true
	case r >= keyCancel:
		return 0, false // for a read that has ended
	}
	return r, true
}

// listen sees the line after every key that did not end it.
func (e *editor) listen(line []rune, pos int, key rune) ([]rune, int, bool) {
	if key == 0 && line == nil {
		return nil, 0, false // the call before the first key
	}
	e.how = howEnter // a key that ended nothing (Enter picking a completion)
	a := e.action
	e.action = 0
	clear := false
	switch {
	case key != readline.CharBell || a == 0:
	case a == keyClear:
		e.draft, clear = string(line), true
	case a == keyInterrupt && len(line) > 0:
		clear = true // Ctrl-C on a line takes the line away; on none, it acts
	case a == keyInterrupt:
		e.events <- editEvent{kind: evInterrupt, seq: e.cur.seq}
	}
	e.mu.Lock()
	if clear {
		e.line = nil
	} else {
		e.line = append(e.line[:0], line...)
	}
	e.mu.Unlock()
	if clear {
		return []rune{}, 0, true
	}
	return nil, 0, false
}

// promptRows is how many rows a prompt takes on its own with the cursor
// after it, and so how far up the row after it is.
func promptRows(prompt string, w int) int {
	rows := 1 + strings.Count(prompt, "\n")
	if i := strings.LastIndexByte(prompt, '\n'); i >= 0 {
		prompt = prompt[i+1:]
	}
	col := 0
	for _, r := range stripSGR(prompt) {
		n := runeWidth(r)
		if col+n > w {
			rows, col = rows+1, 0
		}
		col += n
	}
	if col >= w {
		rows++ // the editor moves to the next row at once
	}
	return rows
}

// completer completes /commands at the start of a line, /model's ids and
// efforts, and @paths of files (mentions, attached to the question)
// anywhere.
type completer struct {
	cwd string

	mu        sync.Mutex // guards commands and models
	commands  []string
	models    []rpc.ModelEntry
	resources []string // server:uri (resources.go)
	templates []string // server:uriTemplate (templates.go)
	// question is the template variable being asked (templates.go): Tab
	// completes the whole line with the server's values.
	question *templateQuestion
}

func newCompleter(cwd string) *completer { return &completer{cwd: cwd, commands: builtinCommands()} }

func (c *completer) set(commands []string) {
	c.mu.Lock()
	c.commands = commands
	c.mu.Unlock()
}

func (c *completer) setModels(models []rpc.ModelEntry) {
	c.mu.Lock()
	c.models = models
	c.mu.Unlock()
}

// modelWords are what may follow "/model " in typed: the ids, or after an
// id its efforts.
func (c *completer) modelWords(typed string) []string {
	args := strings.Fields(strings.TrimPrefix(typed, "/model "))
	if strings.HasSuffix(typed, " ") {
		args = append(args, "") // the word being typed, so far none
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, m := range c.models {
		switch len(args) {
		case 1:
			out = append(out, m.ID)
		case 2:
			if m.ID == args[0] {
				out = append(out, m.Efforts...)
			}
		}
	}
	return out
}

// Do is readline.AutoCompleter's: the endings of what may complete the
// word before the cursor, and how long that word is. The editor writes
// them to the terminal as they are (the list, and the line once one is
// taken), and they are not kin chat's words: file names of the workspace
// (a cloned repository's), an MCP server's resources and values, the
// service's commands and models. One that clean would change (an escape
// sequence, a C1 control, a bidirectional override, a newline or tab) or
// that is not UTF-8 (read as U+FFFD) is not offered: it could drive the
// terminal (set the clipboard with OSC 52, rewrite the screen), and it
// could not be shown as it is anyway.
func (c *completer) Do(line []rune, pos int) ([][]rune, int) {
	out, n := c.candidates(line, pos)
	kept := out[:0]
	for _, cand := range out {
		if !slices.ContainsFunc(cand, func(r rune) bool {
			return r == utf8.RuneError || r == '\n' || r == '\t' || unsafeRune(r)
		}) {
			kept = append(kept, cand)
		}
	}
	return kept, n
}

func (c *completer) candidates(line []rune, pos int) ([][]rune, int) {
	typed := string(line[:pos])
	c.mu.Lock()
	q := c.question
	c.mu.Unlock()
	if q != nil {
		return c.questionWords(q, typed), len(line[:pos])
	}
	word := typed[strings.LastIndexAny(typed, " \t")+1:]
	var out [][]rune
	switch {
	case strings.HasPrefix(typed, "/template ") && strings.HasPrefix(word, "@") && len(word) < len(typed):
		word = word[1:]
		for _, t := range c.startingWith(&c.templates, word) {
			out = append(out, []rune(strings.TrimPrefix(t, word)+" "))
		}
	case strings.HasPrefix(word, "@"):
		word = word[1:]
		for _, p := range completePath(word, c.cwd, 100) {
			if !strings.HasSuffix(p, "/") {
				p += " "
			}
			out = append(out, []rune(strings.TrimPrefix(p, word)))
		}
		for _, r := range c.startingWith(&c.resources, word) {
			out = append(out, []rune(strings.TrimPrefix(r, word)+" "))
		}
	case strings.HasPrefix(typed, "/model "):
		for _, name := range c.modelWords(typed) {
			if rest, ok := strings.CutPrefix(name, word); ok {
				out = append(out, []rune(rest+" "))
			}
		}
	case strings.HasPrefix(typed, "/") && word == typed:
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, name := range c.commands {
			if rest, ok := strings.CutPrefix(name, typed); ok {
				out = append(out, []rune(rest+" "))
			}
		}
	}
	return out, len([]rune(word))
}
