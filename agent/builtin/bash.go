package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/agent/tool"
)

//go:embed bash.md
var bashDescription string

const bashSchema = `{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "The command line to run with bash -c."},
    "timeout": {"type": "number", "exclusiveMinimum": 0, "description": "Seconds before the command is killed. Default 120."},
    "cwd": {"type": "string", "description": "Directory to run in, inside the workspace. Default: the first workspace folder."},
    "network": {"type": "boolean", "description": "true when the command needs the network (downloads, git fetch, API calls). Default false: no network."}
  },
  "required": ["command"],
  "additionalProperties": false
}`

const (
	// bashStreamMax bounds what one command streams to the editor.
	bashStreamMax = 1 << 20
	// bashFlushEvery coalesces output chunks for progress.
	bashFlushEvery = 50 * time.Millisecond
	// bashDrainWait is how long output may keep coming after the command
	// itself exited (from processes it left in the background).
	bashDrainWait = 500 * time.Millisecond
)

type bashTool struct{ opts Options }

type bashArgs struct {
	Command string   `json:"command"`
	Timeout *float64 `json:"timeout"`
	Cwd     string   `json:"cwd"`
	Network bool     `json:"network"`
}

func (b bashTool) Spec() tool.Spec {
	return spec(NameBash, bashDescription, bashSchema, tool.KindExecute)
}

func (b bashTool) Prepare(ctx context.Context, env tool.Env, raw json.RawMessage) (*tool.Action, error) {
	var args bashArgs
	if err := decodeArgs(NameBash, raw, &args, "command"); err != nil {
		return nil, err
	}
	if strings.TrimSpace(args.Command) == "" {
		return nil, errors.New("bash: the command is empty")
	}
	if strings.IndexByte(args.Command, 0) >= 0 {
		return nil, errors.New("bash: the command has a NUL byte")
	}
	timeout := b.opts.BashTimeout
	if args.Timeout != nil {
		s := *args.Timeout
		if s <= 0 || math.IsNaN(s) {
			return nil, fmt.Errorf("bash: timeout must be a positive number of seconds, not %v", s)
		}
		if s > b.opts.BashMaxTimeout.Seconds() {
			return nil, fmt.Errorf("bash: timeout %v s is over the maximum of %v s", s, b.opts.BashMaxTimeout.Seconds())
		}
		timeout = time.Duration(s * float64(time.Second))
	}
	ws, err := workspaceOf(env)
	if err != nil {
		return nil, fmt.Errorf("bash: %v", err)
	}
	cwd := ws.Roots()[0]
	if args.Cwd != "" {
		t, err := confined(ws, args.Cwd)
		if err != nil {
			return nil, fmt.Errorf("bash: cwd: %v", strings.Replace(err.Error(), "this tool only reads inside", "commands only run inside", 1))
		}
		cwd = t.Abs
	}
	if fi, err := boundary.Stat(boundary.RealPath(cwd)); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("bash: cwd %s is not an existing directory", ws.Display(cwd))
	}
	st := b.opts.Sandbox.Status()
	if st.Refuses() {
		return nil, fmt.Errorf("bash: refused, nothing was run: settings.json requires a sandbox for commands (\"sandbox\": \"required\"), and %s", st.Reason)
	}
	cmd := args.Command
	ap := &tool.Approval{
		Title:   "Run " + commandTitle(cmd),
		Command: cmd,
		Cwd:     cwd,
		Sandbox: &tool.Sandbox{Confined: st.Confined, Network: true},
	}
	var policy *sandbox.Policy
	var gaps []string
	if st.Confined {
		p, prot := commandPolicy(b.opts.Sandbox, ws, args.Network)
		policy, gaps = &p, prot.Gaps
		ap.Sandbox.Network = args.Network
		ap.Sandbox.Writable = p.WritableFolders()
		var warnings []string
		if args.Network {
			warnings = append(warnings, "With network access: this command can connect to any host on the network and to services on this machine. Files outside the writable folders stay read-only.")
			if st.Note != "" {
				warnings = append(warnings, "And "+st.Note+".")
			}
		}
		if len(gaps) > 0 {
			// fail closed: what kin could not protect, it says, and it
			// asks every time (no mode, no grant runs it unasked)
			warnings = append(warnings, "kin cannot keep everything that runs code later read-only for this command: "+strings.Join(gaps, "; ")+".")
		}
		ap.Warning = strings.Join(warnings, " ")
		ap.AutoEditAllows = b.opts.Sandbox.Config().AutoApprove && ap.Sandbox.Contained() && len(gaps) == 0
	} else {
		ap.Warning = st.Unconfined()
	}
	ap.Grant = commandGrant(cmd, ap.Sandbox)
	ap.UnsavedFiles, ap.Warning = unsavedNote(env, ws, ap.Warning)
	if len(gaps) > 0 {
		ap.AlwaysAsk, ap.Grant = true, nil
	}
	return &tool.Action{
		Approval: ap,
		Run: func(ctx context.Context, progress func(string)) tool.Result {
			return b.run(ctx, progress, cmd, cwd, timeout, policy)
		},
	}, nil
}

// commandTitle is a command's first line, cut to 80 characters.
func commandTitle(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	first, _, multi := strings.Cut(cmd, "\n")
	first = strings.TrimSpace(first)
	if utf8.RuneCountInString(first) > 80 {
		r := []rune(first)
		first = string(r[:79]) + "…"
	} else if multi {
		first += " …"
	}
	return first
}

// command builds the process for a command line: confined by policy, or,
// when policy is nil (the approval said so), unconfined in a process group
// of its own. Setting up the sandbox stops waiting for another kin (a lock
// it holds) when ctx, the turn, is cancelled.
func (b bashTool) command(ctx context.Context, command, cwd string, policy *sandbox.Policy) (*exec.Cmd, func(), error) {
	env := b.opts.env()
	if policy != nil {
		return b.opts.Sandbox.CommandContext(ctx, *policy, cwd, env, b.opts.Shell, "-c", command)
	}
	cmd := exec.Command(b.opts.Shell, "-c", command)
	cmd.Dir = cwd
	cmd.Env = env
	cmd.SysProcAttr = groupAttr()
	return cmd, func() {}, nil
}

// run runs the command in its own process group (and, when confined, its
// own namespaces) and returns its outcome.
func (b bashTool) run(ctx context.Context, progress func(string), command, cwd string, timeout time.Duration, policy *sandbox.Policy) tool.Result {
	if err := ctx.Err(); err != nil {
		return tool.Failed("bash: cancelled before the command started; it did not run")
	}
	cmd, cleanup, err := b.command(ctx, command, cwd, policy)
	if err != nil {
		return tool.Failed("bash: the sandbox could not be set up, so the command did not run: " + err.Error())
	}
	defer cleanup()
	pr, pw, err := os.Pipe()
	if err != nil {
		return tool.Failed("bash: " + err.Error())
	}
	cmd.Stdin = nil // the null device
	cmd.Stdout = pw
	cmd.Stderr = pw
	start := (*exec.Cmd).Start
	if policy != nil {
		start = b.opts.Sandbox.Start // in the sandbox's scope (abstract sockets)
	}
	if err := startCmd(cmd, start); err != nil {
		pr.Close()
		pw.Close()
		return tool.Failed(fmt.Sprintf("bash: could not start %s: %v", b.opts.Shell, err))
	}
	pw.Close() // the command's copies keep it open
	proc := cmd.Process
	defer endGroup(proc, b.opts.KillGrace) // what left the group (setsid) goes too

	out := newHeadTail(tool.MaxOutput - 512)
	st := newStreamer(progress)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 32<<10)
		for {
			n, err := pr.Read(buf)
			if n > 0 {
				out.Write(buf[:n])
				st.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var (
		waitErr error
		exited  bool
		killed  string
	)
	select {
	case waitErr = <-waitDone:
		exited = true
	case <-timer.C:
		killed = fmt.Sprintf("killed by kin after the timeout of %v", timeout)
	case <-ctx.Done():
		killed = "killed by kin after the turn was cancelled"
	}
	if !exited {
		waitErr = killGroup(proc, waitDone, b.opts.KillGrace)
	}
	// Output may still come from processes the command left behind; give
	// it a moment, then stop whatever of the group still runs.
	select {
	case <-readDone:
	case <-time.After(bashDrainWait):
	}
	leftovers := false
	if policy != nil {
		// The sandbox's PID namespace ended with the command and took
		// everything it started along; what may still show in the group
		// is bubblewrap's own last moment, not the command's leftovers.
		if groupAlive(proc) {
			signalGroup(proc, sigKill)
		}
	} else if killed == "" && groupAlive(proc) {
		leftovers = true
		signalGroup(proc, sigTerm)
		for deadline := time.Now().Add(min(b.opts.KillGrace, 300*time.Millisecond)); groupAlive(proc) && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
		signalGroup(proc, sigKill)
	}
	select {
	case <-readDone:
	case <-time.After(time.Second):
		pr.Close() // a process outside the group holds the pipe
		<-readDone
	}
	pr.Close()
	st.Close()

	text, cut := out.String()
	var sb strings.Builder
	sb.WriteString(text)
	if text == "" {
		sb.WriteString("(no output)\n")
	} else if !strings.HasSuffix(text, "\n") {
		sb.WriteByte('\n')
	}
	status := tool.StatusCompleted
	switch {
	case killed != "":
		// kin knows what happened: the command started, ran until kin
		// killed it, and printed what is above; what it did until then
		// stands. The model is told exactly that: a failure, not an
		// outcome nobody knows (which would need acknowledging).
		status = tool.StatusFailed
		how := ""
		var ee *exec.ExitError
		if errors.As(waitErr, &ee) {
			how = " (" + ee.ProcessState.String() + ")"
		}
		fmt.Fprintf(&sb, "[%s%s; it had started, so whatever it did before it was stopped stands, possibly half done; the output above is all it printed]\n", killed, how)
	default:
		var ee *exec.ExitError
		switch {
		case waitErr == nil:
			sb.WriteString("exit status 0\n")
		case errors.As(waitErr, &ee):
			sb.WriteString(ee.ProcessState.String() + "\n")
			status = tool.StatusFailed
		default:
			sb.WriteString("error: " + waitErr.Error() + "\n")
			status = tool.StatusFailed
		}
		if leftovers {
			sb.WriteString("[processes the command left running in the background were stopped]\n")
		}
		if policy != nil && status == tool.StatusFailed {
			sb.WriteString(sandboxNote(policy))
		}
		if cut && status == tool.StatusCompleted {
			status = tool.StatusOutputLimit
		}
	}
	result := sb.String()
	return tool.Result{
		Status:  status,
		Output:  result,
		Content: []tool.Content{{Type: "terminal", Text: result}},
	}
}

// sandboxNote tells the model, after a confined command failed, what the
// sandbox did not allow, so that "Read-only file system" or a failed
// connection is not mistaken for a bug to work around.
func sandboxNote(p *sandbox.Policy) string {
	note := "[the command ran in kin's sandbox: it may change only " + strings.Join(p.WritableFolders(), ", ") +
		" and $TMPDIR (a private, empty /tmp); everything else is read-only and some paths (kin's home, credentials) are hidden"
	if !p.Network {
		note += "; it has no network: ask again with network: true if it needs one"
	}
	return note + "]\n"
}

// killGroup stops the process group: SIGTERM, up to grace for it to exit,
// then SIGKILL for whatever is left (children that ignore TERM or that the
// shell left behind). It reaps the command and returns its Wait.
func killGroup(p *os.Process, waitDone <-chan error, grace time.Duration) error {
	signalGroup(p, sigTerm)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-waitDone:
		// the shell is gone; its children get the rest of the grace
		for groupAlive(p) {
			select {
			case <-t.C:
				signalGroup(p, sigKill)
				return err
			case <-time.After(20 * time.Millisecond):
			}
		}
		return err
	case <-t.C:
	}
	signalGroup(p, sigKill)
	return <-waitDone
}

// headTail keeps a stream's first and last bytes within limit, counting
// what it drops, and marks the cut between them.
type headTail struct {
	mu    sync.Mutex
	limit int
	head  []byte // everything while it fits, else the first part
	tail  []byte // the last part, once it does not fit (a sliding window)
	total int64
}

func newHeadTail(limit int) *headTail { return &headTail{limit: limit} }

func (h *headTail) keep() (head, tail int) {
	keep := h.limit - 64 // room for the marker
	return keep / 2, keep - keep/2
}

func (h *headTail) Write(p []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.total += int64(len(p))
	if h.tail == nil && len(h.head)+len(p) <= h.limit {
		h.head = append(h.head, p...)
		return
	}
	hk, tk := h.keep()
	if h.tail == nil {
		all := append(h.head, p...)
		h.head = append([]byte(nil), all[:hk]...)
		h.tail = make([]byte, 0, 2*tk)
		p = all[hk:]
	}
	h.tail = append(h.tail, p...)
	if len(h.tail) > 2*tk {
		n := copy(h.tail, h.tail[len(h.tail)-tk:])
		h.tail = h.tail[:n]
	}
}

// String returns what was kept and whether anything was cut.
func (h *headTail) String() (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tail == nil {
		return string(h.head), false
	}
	_, tk := h.keep()
	tail := h.tail
	if len(tail) > tk {
		tail = tail[len(tail)-tk:]
	}
	head := h.head
	// do not split a character at either cut
	if i := lastRuneStart(head); i < len(head) && !utf8.FullRune(head[i:]) {
		head = head[:i]
	}
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	cut := h.total - int64(len(head)) - int64(len(tail))
	return string(head) + fmt.Sprintf("\n[... %d bytes cut ...]\n", cut) + string(tail), true
}

func lastRuneStart(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return len(b)
}

// streamer forwards output to progress, coalesced every bashFlushEvery,
// never splitting a UTF-8 character, up to bashStreamMax bytes. progress
// is only ever called from one goroutine at a time, and never after Close.
type streamer struct {
	progress func(string)
	mu       sync.Mutex
	pending  []byte
	sent     int
	over     bool
	stop     chan struct{}
	done     chan struct{}
}

func newStreamer(progress func(string)) *streamer {
	s := &streamer{progress: progress, stop: make(chan struct{}), done: make(chan struct{})}
	if progress == nil {
		close(s.done)
		return s
	}
	go func() {
		defer close(s.done)
		t := time.NewTicker(bashFlushEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.flush(false)
			case <-s.stop:
				return
			}
		}
	}()
	return s
}

func (s *streamer) Write(p []byte) {
	if s.progress == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.over {
		return
	}
	room := bashStreamMax - s.sent - len(s.pending)
	if len(p) > room {
		p = p[:max(room, 0)]
		s.over = true
	}
	s.pending = append(s.pending, p...)
}

func (s *streamer) flush(final bool) {
	s.mu.Lock()
	p := s.pending
	if !final {
		// hold back a character cut by the chunk's end
		if i := lastRuneStart(p); i < len(p) && !utf8.FullRune(p[i:]) {
			p = p[:i]
		}
	}
	chunk := string(p)
	s.pending = append(s.pending[:0], s.pending[len(p):]...)
	s.sent += len(chunk)
	over := s.over && final
	s.mu.Unlock()
	if over {
		chunk += fmt.Sprintf("\n[... output continues; streaming stopped after %d KiB ...]\n", bashStreamMax>>10)
	}
	if chunk != "" {
		s.progress(chunk)
	}
}

// Close sends what is pending and stops.
func (s *streamer) Close() {
	if s.progress == nil {
		return
	}
	close(s.stop)
	<-s.done
	s.flush(true)
}
