package chat

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/rpc"
)

// Exit codes of Run.
const (
	ExitOK          = 0
	ExitFailed      = 1   // a turn did not complete (piped), a command failed, the service went away
	ExitUsage       = 2   // bad flags, or no model service configured (piped)
	ExitInterrupted = 130 // Ctrl-C at an idle point of piped input
)

// callTimeout bounds every request; the protocol answers at once except
// for session/resume, which reads a log.
const callTimeout = 60 * time.Second

// Options configure Run.
type Options struct {
	In       io.Reader // questions and answers, one a line
	Out, Err io.Writer
	// Interactive is set when In is a terminal: approvals and forms are
	// asked, and the prompt is shown. Otherwise every approval is denied
	// (unless ApproveAll) and every elicitation declined.
	Interactive bool
	// Color paints the output with ANSI colours (Out is a terminal).
	Color bool
	// Editor edits lines at the terminal (In and Out are the terminal's
	// *os.File; see EditorSupported): arrow keys, history, search,
	// multi-line questions, a question typed during a turn. Without it a
	// terminal reads whole lines, edited by the terminal itself.
	Editor bool
	// HistoryFile keeps the questions typed at the editor across runs.
	HistoryFile string

	// Question, when set, is a one-shot run: it is asked in a new
	// session, the answer shown, and Run returns when the turn ends: 0
	// when it completed, ExitInterrupted when Ctrl-C cancelled it,
	// ExitFailed otherwise. Approvals are asked when Interactive, else
	// denied (unless ApproveAll); nothing else is read.
	Question string
	// Answer, when set, receives the answer's text alone (a one-shot run
	// whose standard output is not a terminal); everything else goes to
	// Out.
	Answer io.Writer

	// Conn is a connection to a server that is already up; it is closed
	// when Run returns. When nil, Spawn starts one.
	Conn  io.ReadWriteCloser
	Spawn func(ctx context.Context) (io.ReadWriteCloser, error)

	// ApproveAll allows every approval request once, without asking. Never
	// set it unless the person asked for it (--approve-all).
	ApproveAll bool
	// Worktree makes new sessions in a git worktree of their own
	// (worktree.go); nil: none.
	Worktree *rpc.WorktreeRequest
	// RPC prints every JSON-RPC message, secrets masked, to Err.
	RPC bool
	// Trace, when set, receives every JSON-RPC message as a JSON line,
	// secrets masked (kin chat uses it with --connect; a spawned server
	// traces itself).
	Trace io.Writer
	// Interrupt delivers Ctrl-C: it cancels the running turn, denies the
	// question on screen, and a second one at an idle prompt exits.
	Interrupt <-chan struct{}

	// Cwd is the workspace folder sent in initialize (default: the
	// working directory).
	Cwd     string
	Version string
}

// Run is kin chat: it connects, initializes, and runs the prompt loop until
// /quit, end of input, or a second Ctrl-C. It returns the exit code.
func Run(ctx context.Context, o Options) int {
	if o.In == nil {
		o.In = strings.NewReader("")
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Err == nil {
		o.Err = io.Discard
	}
	if o.Cwd == "" {
		o.Cwd, _ = os.Getwd()
	}
	rwc := o.Conn
	if rwc == nil {
		if o.Spawn == nil {
			fmt.Fprintln(o.Err, "kin: chat: no service to talk to")
			return ExitUsage
		}
		var err error
		if rwc, err = o.Spawn(ctx); err != nil {
			fmt.Fprintf(o.Err, "kin: cannot start the service: %v\n", err)
			return ExitFailed
		}
	}
	// The line editor is made while the service starts.
	scr := newScreen(o.Out, o.Color)
	var ed *editor
	if o.Editor {
		in, _ := o.In.(*os.File)
		out, _ := o.Out.(*os.File)
		if in != nil && out != nil {
			if e, err := newEditor(in, out, o.HistoryFile, o.Cwd, scr); err == nil {
				ed = e
				defer ed.close()
				scr.summarize = foldedReasoning(scr)
				if f, ok := o.Err.(*os.File); ok && IsTerminal(f) {
					// --rpc's lines go above the prompt like the rest.
					o.Err = sideWriter{scr, e.rl.Stderr()}
				}
			}
		}
	}
	notes := newQueue()
	// The connection outlives ctx: jsonrpc2 closes a connection whose
	// context ends, and a second Close does not wait for the first, so a
	// kin chat ended by SIGTERM (ctx) exited while its service was still
	// shutting down (writing the session and the day's usage after kin chat
	// had gone). shutdown ends the connection instead, politely.
	conn := jsonrpc2.NewConn(context.WithoutCancel(ctx), jsonrpc2.NewBufferedStream(rwc, jsonrpc2.VSCodeObjectCodec{}),
		handler{notes}, connOpts(o)...)

	u := &ui{
		o:        o,
		ctx:      ctx,
		conn:     conn,
		rwc:      rwc,
		notes:    notes,
		scr:      scr,
		ed:       ed,
		calls:    map[string]*callState{},
		mcpShown: map[string]string{},
		oneShot:  o.Question != "",
	}
	if u.ed == nil {
		stopInput := make(chan struct{})
		defer close(stopInput)
		lines := make(chan inputLine)
		go readLines(o.In, lines, stopInput)
		u.lines = lines
	}

	code := u.run()
	u.shutdown()
	return code
}

// handler queues notifications for the UI goroutine. It runs on jsonrpc2's
// read loop, so it never waits on anything.
type handler struct{ q *queue }

func (h handler) Handle(ctx context.Context, c *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if !req.Notif {
		_ = c.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "kin chat answers no requests: " + req.Method})
		return
	}
	var params json.RawMessage
	if req.Params != nil {
		params = append(json.RawMessage(nil), *req.Params...)
	}
	h.q.push(note{method: req.Method, params: params})
}

// inputLine is a line read without the editor, and when it was read.
type inputLine struct {
	text string
	at   time.Time
}

func readLines(r io.Reader, out chan<- inputLine, stop <-chan struct{}) {
	defer close(out)
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			select {
			case out <- inputLine{strings.TrimRight(line, "\r\n"), time.Now()}:
			case <-stop:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// callState is what has been shown of one tool call.
type callState struct {
	name, title, kind string
	last              string             // last status line printed
	streamed          bool               // output was shown as it came
	asked             bool               // its approval was asked here
	saw               *rpc.ModelSaw      // what the model saw, once finished
	links             []rpc.ResourceLink // its result's resource links
}

// ui is the one goroutine that draws and reads.
type ui struct {
	// reviewed are the review turns whose findings list has its heading.
	reviewed map[string]int
	// resServers are the servers with resources (resources.go), nil until
	// listed; lastCall is the last finished call (/saw).
	resServers map[string]bool
	lastCall   string
	// attach are the resources /template filled in, for the next question
	// (templates.go); templates numbers its asks.
	attach    []rpc.InputPart
	templates int

	o Options
	// worktreeUsed: a session was made with Options.Worktree.
	worktreeUsed bool
	ctx          context.Context
	conn         *jsonrpc2.Conn
	rwc          io.ReadWriteCloser
	notes        *queue
	scr          *screen
	lines        <-chan inputLine // without the editor
	// askedAt is when the first ask was shown (without the editor): a
	// line read before it was typed before the question.
	askedAt time.Time
	ed      *editor

	// sessionsCursor is session/list's cursor after the last page
	// /sessions listed ("" when that was the last).
	sessionsCursor string

	inputDone bool   // In reached its end
	mode      string // the session's mode ("" or agent: the default)
	commands  []rpc.CommandInfo
	oneShot   bool // Options.Question
	answered  bool // one-shot: the answer's last text ended its line
	// draft is a question being typed when an approval or a form took the
	// prompt; it is offered again at the next question prompt.
	draft string
	// pending are the lines of a multi-line question so far (the editor:
	// a trailing backslash, Alt-Enter, a paste).
	pending []string
	// joinNext: the last of pending goes on in the next line typed (a
	// long pasted line comes in pieces, keys.go).
	joinNext bool
	// queued are questions typed while a turn ran: each is sent when the
	// turn before it ends (commands run at once).
	queued []string
	// turnID is the running turn's, for words steered into it (branching.go).
	turnID    string
	askPrompt string // the current step's prompt of the first ask, once shown (the editor)
	session   string
	// model and effort are the session's.
	model, effort string
	// window is the session's latest turn/usage (or turn/completed's), for
	// the context gauge in the prompt's status; nil when not known.
	window  *rpc.Usage
	running bool // a turn of this session is running
	calls   map[string]*callState
	// subs are the subagents' sessions seen working for this session.
	subs map[string]subagent

	asks      []ask
	headShown bool // the first ask's block is on screen

	// mcpShown is the [mcp] line last shown per server; mcpJust the server
	// whose "connected" line was the last one shown, whose connect notice
	// would only say it again.
	mcpShown map[string]string
	mcpJust  string

	interrupts    int  // Ctrl-C at the idle prompt since the last input line
	cancelled     bool // a Ctrl-C cancelled a turn (a one-shot run exits ExitInterrupted)
	quit          bool
	quitAfterTurn bool
	exit          int
	failed        bool // something the piped run must report
}

func (u *ui) run() int {
	if code, ok := u.initialize(); !ok {
		return code
	}
	if u.oneShot {
		u.question(u.o.Question)
		if !u.running {
			return ExitFailed
		}
	}
	for !u.quit {
		if !u.running && len(u.asks) == 0 && (u.inputDone || u.quitAfterTurn) {
			break
		}
		u.showPrompt()
		var lines <-chan inputLine
		switch {
		case u.inputDone || u.quitAfterTurn:
		case u.oneShot:
			if u.o.Interactive && len(u.asks) > 0 {
				lines = u.lines
			}
		case u.o.Interactive || (!u.running && len(u.asks) == 0):
			lines = u.lines
		}
		var edits <-chan editEvent
		if u.ed != nil {
			edits = u.ed.events
		}
		select {
		case <-u.ctx.Done():
			u.scr.endLine()
			return ExitFailed
		case <-u.conn.DisconnectNotify():
			u.drainNotes()
			u.scr.endLine()
			u.errorf("the service stopped%s", u.serviceTail())
			return ExitFailed
		case <-u.notes.ready:
			u.drainNotes()
		case line, ok := <-lines:
			if !ok {
				u.inputClosed()
				continue
			}
			u.input(line)
		case ev := <-edits:
			u.editorEvent(ev)
		case <-u.o.Interrupt:
			u.interrupt()
		}
	}
	u.scr.endLine()
	if u.exit != 0 {
		return u.exit
	}
	if !u.o.Interactive && u.failed {
		return ExitFailed
	}
	return ExitOK
}

func (u *ui) drainNotes() {
	for _, n := range u.notes.take() {
		u.handle(n)
	}
}

// initialize runs the handshake and says what is missing, if anything.
func (u *ui) initialize() (int, bool) {
	pid := os.Getpid()
	var res initializeResult
	ctx, cancel := context.WithTimeout(u.ctx, callTimeout)
	defer cancel()
	err := u.conn.Call(ctx, "initialize", initializeParams{
		ProcessID:  &pid,
		ClientInfo: &rpc.ClientInfo{Name: "kin chat", Version: u.o.Version},
		// Piped, nobody can fill in a form: kin then declines its own
		// questions at once (headless, on record) instead of asking.
		Capabilities:     &rpc.ClientCapabilities{Approvals: true, Elicitation: &rpc.ElicitationCaps{Form: u.o.Interactive, URL: u.o.Interactive}},
		WorkspaceFolders: []rpc.WorkspaceFolder{{URI: fileURI(u.o.Cwd), Name: filepath.Base(u.o.Cwd)}},
	}, &res)
	if err != nil {
		u.errorf("initialize: %s%s", errText(err), u.serviceTail())
		return ExitFailed, false
	}
	_ = u.conn.Notify(u.ctx, rpc.NotifyInitialized, struct{}{})
	if res.ProtocolVersion != "1" {
		u.warnf("the service speaks protocol version %q; kin chat knows version \"1\"", res.ProtocolVersion)
	}
	if !res.Model.Configured {
		missing := cleanLine(first(res.Model.Missing, "the model service is not configured"))
		if !u.o.Interactive || u.oneShot {
			fmt.Fprintf(u.o.Err, "kin: %s\n", strings.TrimPrefix(missing, "kin: "))
			return ExitUsage, false
		}
		u.scr.line(u.scr.yellow("kin: " + strings.TrimPrefix(missing, "kin: ")))
		u.scr.line(u.scr.dim("Questions need a model service; commands work. /help lists them."))
	} else if u.o.Interactive && !u.oneShot {
		where := ""
		if res.Model.BaseURL != "" {
			where = " at " + displayURL(res.Model.BaseURL)
		}
		commands := ""
		if sb := res.Sandbox; sb.Mode != "" { // absent from a kin older than the command sandbox
			// the start-up notice says why, when they are not confined
			commands = " · commands unconfined"
			if sb.Confined {
				commands = " · commands confined (" + cleanLine(sb.Mechanism) + ")"
			}
		}
		u.scr.line(u.scr.bold("kin chat") + u.scr.dim(fmt.Sprintf(" · model %s%s · workspace %s%s", cleanLine(res.Model.Model), where, cleanLine(strings.Join(res.WorkspaceFolders, ", ")), commands)))
		u.scr.line(u.scr.dim("Ask a question, or /help for commands."))
	}
	return 0, true
}

func fileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// showPrompt puts the current question (or the idle prompt) on screen.
func (u *ui) showPrompt() {
	if len(u.asks) > 0 {
		a := u.asks[0]
		if !u.headShown {
			u.scr.endLine()
			a.show(u)
			u.headShown, u.askPrompt, u.askedAt = true, "", time.Now()
		}
		if u.ed != nil {
			if u.askPrompt == "" {
				u.askPrompt = a.prompt(u)
			}
			u.ed.want(readSpec{ask: a.id(), base: u.askPrompt, prompt: u.askPrompt, esc: isTemplate(a)})
			return
		}
		if u.o.Interactive && !u.scr.prompting {
			u.scr.prompt(a.prompt(u))
		}
		return
	}
	if u.ed != nil {
		if u.oneShot || u.inputDone || u.quitAfterTurn {
			u.ed.stop()
			return
		}
		if u.ed.want(u.questionSpec()) {
			u.draft = ""
		}
		return
	}
	if u.o.Interactive && !u.running && !u.inputDone && !u.scr.prompting {
		if u.scr.mode == "" && !u.scr.col0 {
			u.scr.endLine()
		}
		u.scr.prompt(u.scr.bold("You> "))
	}
}

// questionSpec is the editor's question prompt: a status of what goes on,
// then "You> " ("… " for the next line of a multi-line question).
func (u *ui) questionSpec() readSpec {
	base := u.scr.bold("You> ")
	if len(u.pending) > 0 {
		base = u.scr.dim("… ")
	}
	var status []string
	if u.mode != "" && u.mode != "agent" {
		status = append(status, u.mode)
	}
	if u.running {
		status = append(status, "working")
	}
	if n := len(u.queued); n > 0 {
		status = append(status, fmt.Sprintf("%d queued", n))
	}
	if n := len(u.attach); n > 0 {
		status = append(status, fmt.Sprintf("%d attached", n))
	}
	if c := costGauge(u.window); c != "" {
		status = append(status, c)
	}
	prompt := base
	if len(status) > 0 {
		prompt = u.scr.dim("["+strings.Join(status, " · ")+"]") + " " + base
	}
	if g := contextGauge(u.window); g != "" {
		// The gauge only where it leaves the line most of the row: a
		// prompt and line that wrap could not be redrawn in place.
		with := u.scr.dim("["+strings.Join(append(status, g), " · ")+"]") + " " + base
		if w := u.scr.width; w == nil || (rowsOf(with, w()) == 1 && advance(0, stripSGR(with), w()) <= w()/2) {
			prompt = with
		}
	}
	return readSpec{base: base, prompt: prompt, draft: u.draft}
}

// input is one line read without the editor.
func (u *ui) input(in inputLine) {
	line := in.text
	u.interrupts = 0
	if u.o.Interactive {
		u.scr.afterInput()
	}
	if len(u.asks) > 0 && (!u.o.Interactive || in.at.After(u.askedAt)) {
		u.answerAsk(line)
		return
	}
	if len(u.asks) > 0 {
		// Read before the question's prompt was shown: typed before it
		// (a question for the turn, read while a notification with the
		// approval waited beside it), never its answer. It is what it
		// was typed as; a one-shot run takes no questions.
		u.scr.line(u.scr.dim("(typed before this question: not its answer)"))
		if u.oneShot {
			return
		}
	}
	u.take(line)
}

func (u *ui) answerAsk(line string) {
	a := u.asks[0]
	u.askPrompt = ""
	if a.answer(u, line) {
		u.dropAsk(a.id())
	}
}

// editorEvent is what the editor read.
func (u *ui) editorEvent(ev editEvent) {
	switch ev.kind {
	case evInterrupt:
		if len(u.pending) > 0 {
			u.pending, u.joinNext = nil, false
			u.scr.line(u.scr.dim("(the question's lines above are dropped)"))
			return
		}
		u.interrupt()
	case evEOF:
		u.ed.ended(ev.seq)
		u.inputClosed()
	case evLine:
		spec, ok := u.ed.ended(ev.seq)
		switch {
		case !ok:
		case ev.how == howCancel:
			if spec.ask == "" && ev.text != "" {
				u.draft = ev.text
			}
		case ev.how == howEscape:
			u.interrupts = 0
			if a := u.firstAsk(); a != nil && a.id() == spec.ask {
				a.refuse(u, "Esc")
				u.dropAsk(a.id())
			}
		case spec.ask != "":
			u.interrupts = 0
			if len(u.asks) > 0 && u.asks[0].id() == spec.ask {
				u.answerAsk(ev.text)
			}
		default:
			u.interrupts = 0
			u.typed(ev.text, ev.how)
		}
	}
}

// typed is a line typed at the question prompt: the last of a question, or
// one that goes on in the next.
func (u *ui) typed(text string, how int) {
	more := how == howNewline || how == howPaste || how == howJoin
	if how == howEnter && strings.HasSuffix(text, `\`) {
		text, more = text[:len(text)-1], true
	}
	if u.joinNext && len(u.pending) > 0 {
		// the piece before was part of this line (a long pasted one)
		text = u.pending[len(u.pending)-1] + text
		u.pending = u.pending[:len(u.pending)-1]
	}
	u.joinNext = how == howJoin
	if more {
		u.pending = append(u.pending, text)
		return
	}
	text = strings.Join(append(u.pending, text), "\n")
	u.pending = nil
	text = fromHistory(text) // a recalled multi-line question goes as its lines
	u.ed.remember(text)
	u.take(text)
}

// take is a question or a command. A question typed while a turn runs is
// queued and sent when the turn ends; a command runs at once.
func (u *ui) take(text string) {
	t := strings.TrimSpace(text)
	if t == "" {
		return
	}
	if !u.o.Interactive {
		u.scr.line(u.scr.bold("You> ") + cleanLine(t))
	}
	if strings.HasPrefix(t, "/") && !strings.Contains(t, "\n") {
		u.command(t)
		return
	}
	if u.running && strings.HasPrefix(t, steerPrefix) {
		u.steer(strings.TrimPrefix(t, steerPrefix))
		return
	}
	if u.running {
		u.queued = append(u.queued, t)
		u.scr.line(u.scr.dim("(queued: kin sends it when this turn ends)"))
		return
	}
	u.question(t)
}

func (u *ui) question(text string) {
	if u.session == "" && !u.newSession("", false) {
		return
	}
	var res turnStartResult
	if u.resServers == nil && strings.Contains(text, "@") && strings.Contains(text, "://") {
		u.loadResources(true) // @server:uri needs the servers' names
	}
	p := withParts(withResources(questionParams(u.session, text, u.o.Cwd), text, u.resServers), text, u.attach)
	// What /template attached goes with this question only, sent or not:
	// one that made kin refuse the question must not refuse the next.
	u.attach = nil
	if err := u.call("turn/start", p, &res); err != nil {
		u.fail(err)
		return
	}
	u.startedTurn()
}

// inputClosed: nobody can answer any more. What waits is refused, and the
// loop ends when the running turn does.
func (u *ui) inputClosed() {
	u.inputDone = true
	if u.o.Interactive {
		u.scr.endLine()
	}
	for len(u.asks) > 0 {
		a := u.asks[0]
		if !u.headShown {
			a.show(u)
		}
		a.refuse(u, "input closed")
		u.dropAsk(a.id())
	}
}

// interrupt is Ctrl-C. It stops what runs (the turn, the question asked);
// at the idle prompt the first says how to exit and the second exits.
// interrupts counts the presses at the idle prompt only: one that cancelled
// a turn does not make the next one exit unannounced.
func (u *ui) interrupt() {
	u.interrupts++
	switch {
	case isTemplate(u.firstAsk()):
		// kin chat's own question: it stops, the turn goes on.
		u.interrupts = 0
		a := u.firstAsk()
		u.scr.endLine()
		a.refuse(u, "interrupted")
		u.dropAsk(a.id())
	case u.running:
		u.interrupts, u.cancelled = 0, true
		u.scr.endLine()
		u.cancelTurn()
		if !u.o.Interactive {
			u.quitAfterTurn = true
		}
	case len(u.asks) > 0:
		u.interrupts = 0
		a := u.asks[0]
		u.scr.endLine()
		a.refuse(u, "interrupted")
		u.dropAsk(a.id())
	case !u.o.Interactive:
		u.exit, u.quit = ExitInterrupted, true
	case u.interrupts >= 2:
		u.scr.endLine()
		u.quit = true
	default:
		u.scr.line(u.scr.dim("(Ctrl-C again to exit, or /quit)"))
	}
}

func (u *ui) cancelTurn() {
	if !u.running {
		u.scr.line(u.scr.dim("No turn is running."))
		return
	}
	var res turnCancelResult
	if err := u.call("turn/cancel", sessionIDParams{SessionID: u.session}, &res); err != nil {
		u.fail(err)
		return
	}
	u.scr.line(u.scr.dim("cancelling…"))
}

// ---- notifications ----

func (u *ui) handle(n note) {
	if u.subagentNote(n) {
		return
	}
	switch n.method {
	case rpc.NotifyTurnDelta:
		var d turnDelta
		if json.Unmarshal(n.params, &d) != nil || d.SessionID != u.session {
			return
		}
		if u.o.Answer != nil {
			if t := clean(d.Text); t != "" {
				_, _ = io.WriteString(u.o.Answer, t)
				u.answered = strings.HasSuffix(t, "\n")
			}
			return
		}
		u.scr.stream("text:"+d.TurnID, u.scr.bold("Assistant> "), "", clean(d.Text))
	case rpc.NotifyTurnStarted:
		var st rpc.TurnStarted
		if json.Unmarshal(n.params, &st) != nil || st.SessionID != u.session {
			return
		}
		u.turnID = st.TurnID
		if l := attachedLine(st.Parts); l != "" {
			u.scr.line(u.scr.dim(l))
		}
	case rpc.NotifyTurnReasoning:
		u.reasoning(n.params)
	case rpc.NotifyTurnUsage:
		var us rpc.TurnUsage
		if json.Unmarshal(n.params, &us) != nil || us.SessionID != u.session {
			return
		}
		u.noteUsage(us.Usage)
	case rpc.NotifyTurnToolCall:
		var c toolCall
		if json.Unmarshal(n.params, &c) != nil || c.SessionID != u.session {
			return
		}
		u.toolCall(c)
	case rpc.NotifyCommandsChanged:
		u.loadCommands()
	case rpc.NotifyTurnSteered:
		u.steered(n.params)
	case rpc.NotifyReviewFinding:
		u.finding(n.params)
	case rpc.NotifyTurnPlan:
		var p rpc.TurnPlan
		if json.Unmarshal(n.params, &p) != nil || p.SessionID != u.session {
			return
		}
		u.showPlan(p.Entries)
	case rpc.NotifyTurnCompleted:
		var c turnCompleted
		if json.Unmarshal(n.params, &c) != nil || c.SessionID != u.session || !u.running {
			return
		}
		u.turnDone(c)
	case rpc.NotifyApprovalRequest:
		var r approvalRequest
		if json.Unmarshal(n.params, &r) != nil || r.RequestID == "" {
			return
		}
		if r.CallID != "" {
			st := u.calls[r.CallID]
			if st == nil {
				st = &callState{}
				u.calls[r.CallID] = st
			}
			st.asked = true
		}
		u.addAsk(&approvalAsk{req: r})
	case rpc.NotifyApprovalResolved:
		var r approvalResolved
		if json.Unmarshal(n.params, &r) == nil {
			u.resolved(r.RequestID, describeReason(r.Reason))
		}
	case rpc.NotifyElicitationRequest:
		var r elicitationRequest
		if json.Unmarshal(n.params, &r) != nil || r.RequestID == "" {
			return
		}
		u.addAsk(&elicitAsk{req: r})
	case rpc.NotifyElicitationResolved:
		var r elicitationResolved
		if json.Unmarshal(n.params, &r) == nil {
			u.resolved(r.RequestID, describeReason(r.Reason))
		}
	case rpc.NotifyMCPStatus:
		var st mcpStatus
		if json.Unmarshal(n.params, &st) != nil {
			return
		}
		switch st.State {
		case "connecting", "awaiting_trust":
			return // on the way; the launch approval or the outcome follows
		}
		l := fmt.Sprintf("%s %s: %s", u.scr.cyan("[mcp]"), cleanLine(st.Server), u.scr.status(st.State))
		if st.State == "connected" && u.ed != nil {
			defer u.loadResources(true) // for @server:uri completion
		}
		if st.State == "connected" {
			l += fmt.Sprintf(" (%d tools)", st.Tools)
		}
		if st.Error != "" {
			l += ": " + cleanLine(st.Error)
		}
		// The same state again (a tool list fetched again, unchanged) is
		// not news.
		if u.mcpShown[st.Server] == l {
			return
		}
		u.mcpShown[st.Server] = l
		u.mcpJust = st.Server
		if st.State != "connected" {
			u.mcpJust = ""
		}
		u.scr.line(l)
	case rpc.NotifyNotice:
		var nt notice
		if json.Unmarshal(n.params, &nt) != nil {
			return
		}
		if just := u.mcpJust; just != "" && nt.Source == "mcp" && nt.Level == "info" &&
			strings.HasPrefix(nt.Message, "MCP server "+just+": ") && strings.Contains(nt.Message, " tools from ") {
			// The connect's notice says again what the [mcp] line just said.
			u.mcpJust = ""
			return
		}
		tag := "[" + first(nt.Level, "info") + "]"
		switch nt.Level {
		case "warning":
			tag = u.scr.yellow(tag)
		case "error":
			tag = u.scr.red(tag)
		default:
			tag = u.scr.cyan(tag)
		}
		u.scr.line(tag + " " + cleanLine(nt.Message))
	}
}

func (u *ui) toolCall(c toolCall) {
	st := u.calls[c.CallID]
	if st == nil {
		st = &callState{}
		u.calls[c.CallID] = st
	}
	st.name, st.kind = first(c.Name, st.name), first(c.Kind, st.kind)
	st.title = first(c.Title, st.title)
	if c.ModelSaw != nil {
		st.saw, st.links, u.lastCall = c.ModelSaw, c.Links, c.CallID
	}
	u.delegateWaiting(c, st)
	if (st.name == "update_plan" || st.name == "ask") && (c.Status == "" || c.Status == "pending" || c.Status == "awaiting_approval" || c.Status == "running" || c.Status == "completed") {
		// kin's own tools show themselves: the plan as a checklist, the
		// question as a form. Only a call that did not go through is a
		// tool line.
		return
	}
	label := fmt.Sprintf("%s %s: %s", u.scr.cyan("[tool]"), oneLine(st.name), oneLine(first(st.title, st.name)))
	if c.Status == "working" {
		// An MCP task: each new status or message on a line of its own.
		if key := "working:" + c.StatusMessage; st.last != key {
			st.last = key
			u.scr.line(label + " … " + u.scr.status(c.Status) + ": " + cleanLine(c.StatusMessage))
		}
		return
	}
	if c.OutputDelta != "" {
		if st.last != "running" && !strings.HasPrefix(st.last, "working:") {
			u.scr.line(label + " … running")
			st.last = "running"
		}
		st.streamed = true
		u.scr.stream("out:"+c.CallID, "", "    ", clean(c.OutputDelta))
		return
	}
	switch c.Status {
	case "", "pending", "awaiting_approval":
		return
	}
	if c.Status == st.last {
		return
	}
	st.last = c.Status
	line := label + " … " + u.scr.status(c.Status)
	if exit := exitStatus(c.Output); exit != "" && st.kind == "execute" && c.Status != "completed" {
		line += " (" + cleanLine(exit) + ")" // how the command ended, whatever of its output is shown
	}
	if c.Status == "denied" && c.Reason != "" && !st.asked {
		// kin's words (the mode, a cancel); not for a call whose approval
		// was answered on screen: that said it.
		line += " (" + cleanLine(c.Reason) + ")"
	}
	u.scr.line(line)
	switch c.Status {
	case "failed", "unknown", "output_limit":
		if !st.streamed {
			u.scr.indented(c.Output, 12)
		} else if out := strings.TrimRight(c.Output, "\n"); out != "" {
			// The streamed output is on screen; its last line says what
			// kin added (how it ended is on the status line).
			if last := out[strings.LastIndexByte(out, '\n')+1:]; exitStatus(last) == "" {
				u.scr.indented(last, 1)
			}
		}
	case "completed":
		switch {
		case st.streamed:
		case st.kind == "execute":
			u.scr.indented(c.Output, 20)
		case st.name == "delegate":
			// The subagent's answer streamed above, under the call.
		case st.kind == "other" || st.kind == "fetch":
			// An MCP result: its beginning, as spec 000 shows it.
			u.scr.indented(c.Output, 6)
		}
	}
}

// exitStatus is how a command ended, from its output's lines ("exit
// status 1", "signal: killed", kin's "[killed by kin after …; …]"), or "".
func exitStatus(output string) string {
	found := ""
	for _, l := range strings.Split(output, "\n") {
		switch {
		case strings.HasPrefix(l, "exit status "), strings.HasPrefix(l, "signal: "):
			found = l
		case strings.HasPrefix(l, "[killed"):
			l, _, _ = strings.Cut(strings.TrimPrefix(l, "["), ";")
			found = strings.TrimSuffix(l, "]")
		}
	}
	return found
}

func (u *ui) turnDone(c turnCompleted) {
	u.scr.endLine()
	why := ""
	if c.Error != "" {
		why = ": " + cleanLine(c.Error)
	}
	switch c.Status {
	case "completed":
	case "cancelled":
		u.scr.line(u.scr.yellow("[turn cancelled]") + why)
	case "limit":
		u.scr.line(u.scr.yellow("[turn stopped: too many tool calls in one turn]") + why)
	case "failed":
		u.scr.line(u.scr.red("[turn failed]") + why)
	default:
		u.scr.line(u.scr.yellow("[turn ended: "+cleanLine(c.Status)+"]") + why)
	}
	if c.Status != "completed" {
		u.failed = true
	}
	u.noteUsage(c.Usage)
	if line := contextLine(&c.Usage); line != "" && u.o.Interactive && u.ed == nil {
		// (the line editor's prompt shows it in its status)
		u.scr.line(u.scr.dim(line))
	}
	u.running = false
	if u.oneShot {
		if u.o.Answer != nil && !u.answered {
			_, _ = io.WriteString(u.o.Answer, "\n")
		}
		u.quit = true
		switch {
		case c.Status == "completed":
		case c.Status == "cancelled" && u.cancelled:
			u.exit = ExitInterrupted
		default:
			u.exit = ExitFailed
		}
		return
	}
	if u.o.Interactive {
		u.scr.blank()
	}
	if len(u.queued) > 0 && !u.quitAfterTurn {
		q := u.queued[0]
		u.queued = u.queued[1:]
		u.scr.line(u.scr.bold("You> ") + clean(q) + u.scr.dim("  (queued)"))
		u.question(q)
	}
}

// addAsk queues a question, or answers it at once where nobody may be asked.
func (u *ui) addAsk(a ask) {
	for _, q := range u.asks {
		if q.id() == a.id() {
			return // shown again by session/resume
		}
	}
	switch {
	case u.o.ApproveAll && isApproval(a) && !isLimit(a):
		u.scr.endLine()
		a.show(u)
		u.scr.line(u.scr.green("approved") + " " + u.scr.dim("(--approve-all)"))
		u.respondApproval(a.id(), "allow_once")
	case !u.o.Interactive:
		u.scr.endLine()
		a.show(u)
		if isLimit(a) {
			// Spending past a limit is the person's choice only.
			u.scr.line(u.scr.red("stopped") + " (non-interactive: nobody can choose to spend past the limit)")
			u.respondApproval(a.id(), "deny")
		} else if isApproval(a) {
			u.scr.line(u.scr.red("denied") + " (non-interactive; use --approve-all)")
			u.respondApproval(a.id(), "deny")
		} else {
			u.scr.line(u.scr.dim("declined (non-interactive)"))
			u.respondElicitation(a.id(), "decline", nil)
		}
	case u.inputDone:
		u.scr.endLine()
		a.show(u)
		a.refuse(u, "input closed")
	default:
		u.asks = append(u.asks, a)
	}
}

// firstAsk is the ask on screen, nil when none.
func (u *ui) firstAsk() ask {
	if len(u.asks) == 0 {
		return nil
	}
	return u.asks[0]
}

func isApproval(a ask) bool {
	_, ok := a.(*approvalAsk)
	return ok
}

func (u *ui) dropAsk(id string) {
	for i, a := range u.asks {
		if a.id() == id {
			u.asks = append(u.asks[:i:i], u.asks[i+1:]...)
			if i == 0 {
				u.headShown = false
				u.scr.endLine()
			}
			return
		}
	}
}

// resolved takes a question the service no longer waits for off the queue.
func (u *ui) resolved(id, why string) {
	for i, a := range u.asks {
		if a.id() != id {
			continue
		}
		if i == 0 && u.headShown {
			u.scr.line(u.scr.dim("(no longer asked: " + why + ")"))
		}
		u.dropAsk(id)
		return
	}
}

func describeReason(r string) string {
	switch r {
	case "cancelled":
		return "the turn was cancelled"
	case "disconnected":
		return "the connection closed"
	case "shutdown":
		return "the service is shutting down"
	case "grant":
		return "a standing grant answered it"
	case "call_ended":
		return "the tool call that asked ended without it"
	case "server_gone":
		return "the MCP server that asked went away"
	case "person":
		return "answered"
	}
	return first(r, "resolved")
}

func (u *ui) respondApproval(id, decision string) {
	err := u.call("approval/respond", approvalRespondParams{RequestID: id, Decision: decision}, nil)
	switch {
	case err == nil:
	case isNotFound(err):
		u.scr.line(u.scr.dim("(that request was already resolved)"))
	default:
		u.fail(err)
	}
}

func (u *ui) respondElicitation(id, action string, content map[string]any) error {
	err := u.call("elicitation/respond", elicitationRespondParams{RequestID: id, Action: action, Content: content}, nil)
	switch {
	case err == nil:
	case isNotFound(err):
		u.scr.line(u.scr.dim("(that request was already resolved)"))
	default:
		u.fail(err)
	}
	return err
}

// ---- requests ----

func (u *ui) call(method string, params, out any) error {
	ctx, cancel := context.WithTimeout(u.ctx, callTimeout)
	defer cancel()
	if out == nil {
		out = new(json.RawMessage)
	}
	return u.conn.Call(ctx, method, params, out)
}

// fail reports a failed request.
func (u *ui) fail(err error) {
	u.failed = true
	u.errorf("%s", errText(err))
}

func (u *ui) errorf(format string, args ...any) {
	msg := "kin: " + strings.TrimPrefix(fmt.Sprintf(format, args...), "kin: ")
	if u.o.Interactive {
		u.scr.line(u.scr.red(msg))
		return
	}
	u.scr.endLine()
	fmt.Fprintln(u.o.Err, msg)
}

func (u *ui) warnf(format string, args ...any) {
	u.scr.line(u.scr.yellow("kin: " + fmt.Sprintf(format, args...)))
}

// errText is what a person reads of a failed request.
func errText(err error) string {
	var re *jsonrpc2.Error
	if errors.As(err, &re) {
		return cleanLine(re.Message)
	}
	if errors.Is(err, jsonrpc2.ErrClosed) {
		return "the connection to the service is closed"
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "the service did not answer in time"
	}
	return cleanLine(err.Error())
}

func isNotFound(err error) bool {
	var re *jsonrpc2.Error
	return errors.As(err, &re) && re.Code == rpc.CodeNotFound
}

func (u *ui) serviceTail() string {
	if t, ok := u.rwc.(interface{ Stderr() string }); ok {
		if s := strings.TrimSpace(t.Stderr()); s != "" {
			return "\n" + clean(s)
		}
	}
	return ""
}

// shutdown ends the conversation politely: shutdown, exit, close.
func (u *ui) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	select {
	case <-u.conn.DisconnectNotify():
	default:
		var out json.RawMessage
		if err := u.conn.Call(ctx, "shutdown", nil, &out); err == nil {
			_ = u.conn.Notify(ctx, rpc.NotifyExit, nil)
		}
	}
	_ = u.conn.Close()
	// The connection may have been closed already (the service stopped):
	// closing the service itself waits for it to exit, whoever closed first.
	_ = u.rwc.Close()
	u.scr.endLine()
}
