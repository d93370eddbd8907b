//go:build linux

package chat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/ptytest"
	"github.com/kin-dev/kin/agent/reaper"
	"github.com/kin-dev/kin/mcp/mcptest"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// terminal is the real kin binary running `kin chat` at a pseudo-terminal,
// as its controlling terminal: typed Ctrl-C is a real SIGINT from the
// line discipline.
type terminal struct {
	t       testing.TB
	master  *os.File
	raw     *buffer // every byte written, as written (awaitRaw)
	vt      *vt     // what a person sees (await, awaitPrompt, plain)
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
}

// The pty tests' terminal is wide, so that no test line wraps unless a test
// makes it.
const termCols, termRows = 250, 50

func (e *env) terminal(t testing.TB, args ...string) *terminal {
	t.Helper()
	return e.terminalSized(t, termCols, termRows, args...)
}

func (e *env) terminalSized(t testing.TB, cols, rows int, args ...string) *terminal {
	t.Helper()
	return e.terminalWith(t, kin(t), cols, rows, args...)
}

func (e *env) terminalWith(t testing.TB, bin string, cols, rows int, args ...string) *terminal {
	t.Helper()
	master, slave := ptytest.Open(t)
	ws := struct{ rows, cols, x, y uint16 }{uint16(rows), uint16(cols), 0, 0}
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSWINSZ, uintptr(unsafe.Pointer(&ws))); errno != 0 {
		t.Fatalf("TIOCSWINSZ: %v", errno)
	}
	cmd := exec.Command(bin, append([]string{"chat"}, args...)...)
	cmd.Dir, cmd.Env = e.WS, append(e.binEnv(), "TERM=xterm")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	term := &terminal{t: t, master: master, raw: newBuffer(), vt: newVT(cols, rows), cmd: cmd, exited: make(chan struct{})}
	go func() {
		term.waitErr = cmd.Wait()
		close(term.exited)
	}()
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			if n > 0 {
				// The raw bytes first: whatever the screen (vt) shows, raw
				// holds too. Tests still read one view per check: they
				// await on the view they assert on (awaitRaw for raw).
				_, _ = term.raw.Write(buf[:n])
				_, _ = term.vt.Write(buf[:n])
				if r := term.vt.takeReply(); len(r) > 0 && !e.mute {
					if e.slow > 0 {
						time.AfterFunc(e.slow, func() { _, _ = master.Write(r) })
					} else {
						_, _ = master.Write(r)
					}
				}
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		select {
		case <-term.exited:
		default:
			term.end()
		}
		master.Close()
		if u := term.vt.Unknown(); len(u) > 0 {
			t.Errorf("kin chat wrote what the test terminal does not know: %q", u)
		}
		if t.Failed() || os.Getenv("KIN_CHAT_SHOW_SCREEN") != "" {
			t.Logf("the terminal showed:\n%s", term.plain())
		}
	})
	return term
}

// end ends a kin chat still running when its test ends, as kill(1)
// would: SIGTERM, on which kin chat ends its service and waits for it. A
// SIGKILL left the service (its own process group) running on: it saw its
// stdin close and wrote the session and the day's usage into KIN_HOME
// while the test's TempDir cleanup removed it ("directory not empty" on a
// loaded machine). Only a kin chat that does not end within timeout is
// killed; either way end returns once kin chat and every process it had
// started are gone.
func (term *terminal) end() {
	term.t.Helper()
	below := reaper.Descendants(term.cmd.Process.Pid)
	_ = term.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-term.exited:
	case <-time.After(timeout):
		term.t.Errorf("kin chat did not end %v after a SIGTERM", timeout)
		_ = term.cmd.Process.Kill()
		<-term.exited
	}
	awaitGone(term.t, below)
}

// awaitGone waits until none of pids runs (gone, or a zombie: it ended and
// writes nothing more), and kills those still running after timeout.
func awaitGone(t testing.TB, pids []int) {
	t.Helper()
	running := func(pid int) bool {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		return err == nil && !bytes.Contains(stat, []byte(") Z "))
	}
	deadline := time.Now().Add(timeout)
	for _, pid := range pids {
		for running(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if running(pid) {
			t.Errorf("process %d (kin chat, or one it started) still runs %v after kin chat was ended", pid, timeout)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// plain is the screen as a person reads it, scrollback included.
func (term *terminal) plain() string { return term.vt.Text() }

// await waits until substr is on screen n times.
func (term *terminal) await(substr string, n int) {
	term.t.Helper()
	term.until(fmt.Sprintf("%q (x%d)", substr, n), func(s string) bool { return strings.Count(s, substr) >= n })
}

// awaitAfter waits until substr is on screen after marker.
func (term *terminal) awaitAfter(marker, substr string) {
	term.t.Helper()
	term.until(fmt.Sprintf("%q after %q", substr, marker), func(s string) bool {
		i := strings.LastIndex(s, marker)
		return i >= 0 && strings.Contains(s[i+len(marker):], substr)
	})
}

// awaitPrompt waits until the cursor's row is prompt and the cursor after
// it: the editor waits there for a line, nothing typed yet. "You> " alone
// is the idle question prompt; during a turn it shows a status first.
func (term *terminal) awaitPrompt(prompt string) {
	term.t.Helper()
	term.awaitPromptWithin(prompt, timeout)
}

// awaitPromptWithin is awaitPrompt for what takes longer than one wait:
// within bounds it.
func (term *terminal) awaitPromptWithin(prompt string, within time.Duration) {
	term.t.Helper()
	term.untilWithin(fmt.Sprintf("the prompt %q", prompt), within, func(string) bool {
		y, x := term.vt.Cursor()
		return term.vt.Row(y) == strings.TrimRight(prompt, " ") && x == len([]rune(prompt))
	})
}

// awaitRaw waits until the bytes kin chat wrote (including what was later
// drawn over) hold substr: with its colours when substr holds an escape,
// else with them taken out. A check on the raw bytes waits on the raw
// bytes, never on the screen, which is updated at another moment.
func (term *terminal) awaitRaw(substr string) {
	term.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		changed := term.raw.next()
		s := term.raw.String()
		if !strings.Contains(substr, "\x1b") {
			s = ansi.ReplaceAllString(s, "")
		}
		if strings.Contains(s, substr) {
			return
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("timed out waiting for %q in what kin chat wrote:\n%q", substr, term.raw.String())
		}
		select {
		case <-changed:
		case <-time.After(time.Until(deadline)):
		}
	}
}

func (term *terminal) until(what string, ok func(string) bool) {
	term.t.Helper()
	term.untilWithin(what, timeout, ok)
}

func (term *terminal) untilWithin(what string, within time.Duration, ok func(string) bool) {
	term.t.Helper()
	deadline := time.Now().Add(within)
	for {
		changed := term.vt.next()
		if ok(term.plain()) {
			return
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("timed out waiting %v for %s on the terminal", within, what)
		}
		select {
		case <-changed:
		case <-time.After(time.Until(deadline)):
		}
	}
}

func (term *terminal) typeIn(s string) {
	term.t.Helper()
	if _, err := term.master.Write([]byte(s)); err != nil {
		term.t.Fatal(err)
	}
}

// exitOK waits for kin chat to exit, and fails the test unless it
// exited 0.
func (term *terminal) exitOK() {
	term.t.Helper()
	if err := term.waitExit(); err != nil {
		term.t.Errorf("kin chat exited with %v", err)
	}
}

func (term *terminal) waitExit() error {
	term.t.Helper()
	select {
	case <-term.exited:
		return term.waitErr
	case <-time.After(timeout):
		term.t.Fatal("kin chat did not exit")
		return nil
	}
}

// Ctrl-C cancels the streaming turn without touching the service (its own
// process group), which answers the next question; at the idle prompt the
// first Ctrl-C says how to exit (also right after one cancelled a turn) and
// a second one exits.
func TestBinaryTerminalCtrlC(t *testing.T) {
	e := newEnv(t)
	hold := make(chan struct{})
	defer close(hold)
	e.Model.Script(
		modeltest.Reply{Text: []string{"Thinking", " for ever"}, Hold: hold},
		modeltest.Reply{Text: []string{"second ", "answer"}},
	)
	term := e.terminal(t)
	term.awaitRaw("\x1b[1mYou> ") // the prompt, in colour on a terminal
	term.awaitPrompt("You> ")
	term.typeIn("think hard\r")
	term.await("Assistant> Thinking", 1)
	term.typeIn("\x03") // Ctrl-C
	term.await("[turn cancelled]", 1)
	term.awaitPrompt("You> ")
	term.typeIn("\x03") // the one that cancelled does not count
	term.await("(Ctrl-C again to exit, or /quit)", 1)
	term.awaitPrompt("You> ")
	term.typeIn("again\r")
	term.await("Assistant> second answer", 1)
	term.awaitPrompt("You> ")
	term.typeIn("\x03")
	term.await("(Ctrl-C again to exit, or /quit)", 2)
	term.typeIn("\x03")
	term.exitOK()
}

// Spec 000 section 1 through the real binary and a real MCP server: the
// launch is trusted with t, the call's approval shows Server, Destination,
// Tool and Arguments and the warning, y sends it (the server sees exactly
// one call), and a form elicitation is answered field by field.
func TestBinaryTerminalMCP(t *testing.T) {
	e := newEnv(t)
	s := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	var calls atomic.Int64
	mcptest.AddTool(s, "query-docs", "Query the documentation.", false, func(_ context.Context, a map[string]any) (*mcp.CallToolResult, error) {
		calls.Add(1)
		return mcptest.Text(fmt.Sprintf("docs for %v", a["query"])), nil
	})
	s.AddTool(&mcp.Tool{Name: "greet", Description: "Greets after asking a name.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Who are you?", RequestedSchema: json.RawMessage(
				`{"type":"object","properties":{"name":{"type":"string","title":"Name"},"color":{"type":"string","enum":["red","green"]}},"required":["name"]}`)})
			if err != nil {
				return nil, err
			}
			return mcptest.Text(fmt.Sprintf("%s: hello %v (%v)", res.Action, res.Content["name"], res.Content["color"])), nil
		})
	url := mcptest.ServeHTTP(t, s)
	e.httpServer("docs", url, nil)
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "mcp__docs__query-docs", Arguments: `{"query":"react hooks"}`}}},
		modeltest.Reply{Text: []string{"Hooks let function components keep state."}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "g1", Name: "mcp__docs__greet", Arguments: `{}`}}},
		modeltest.Reply{Text: []string{"Greeted."}},
	)

	term := e.terminal(t)
	term.await("Approve this operation? [y: Allow once / t: Trust server / N: Deny] ", 1)
	if out := term.plain(); !strings.Contains(out, "[Server launch: docs]") || !strings.Contains(out, "URL: "+url+"\n") {
		t.Errorf("launch block:\n%s", out)
	}
	term.typeIn("t\r")
	term.await("[mcp] docs: connected", 1)
	term.typeIn("How do React hooks work?\r")
	term.await("Approve this operation? [y: Allow once / a: ", 1)
	want := fmt.Sprintf(`[Tool: mcp__docs__query-docs]
Server: "docs"
Destination: %q
Tool: "query-docs"
Arguments: "{\n  \"query\": \"react hooks\"\n}"
Arguments are sent to this MCP server. kin cannot control what the server does with them.
Approve this operation? [y: Allow once / a: Always allow query-docs on docs in this session / p: Always allow query-docs on docs in every session / N: Deny] `, url)
	if out := term.plain(); !strings.Contains(out, want) {
		t.Errorf("the approval is not spec 000's block; want\n%s", want)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the server was called before the approval (%d)", n)
	}
	term.typeIn("y\r")
	term.await("[tool] mcp__docs__query-docs: Call query-docs on docs … completed", 1)
	term.await("Assistant> Hooks let function components keep state.", 1)
	term.awaitPrompt("You> ")
	if n := calls.Load(); n != 1 {
		t.Errorf("the server saw %d calls, want 1", n)
	}
	if out := term.plain(); strings.Count(out, "docs: connected") != 1 || strings.Contains(out, "MCP server docs: 2 tools from") {
		t.Errorf("the connect is said more than once:\n%s", out)
	}

	term.typeIn("greet me\r")
	term.awaitAfter("greet me", "Approve this operation? [y: Allow once / a: ")
	term.typeIn("y\r")
	term.await("[MCP server docs asks] Who are you?", 1)
	term.await("Name (required): ", 1) // the server's order: name, then color
	term.typeIn("Ana\r")
	term.await("choose 1-2 (optional): ", 1)
	term.typeIn("2\r")
	term.await("Assistant> Greeted.", 1)
	term.awaitPrompt("You> ")
	reqs := e.Model.Requests()
	if out, _ := reqs[len(reqs)-1].LastToolOutput(); !strings.Contains(out, "accept: hello Ana (green)") {
		t.Errorf("the server got %q", out)
	}
	term.typeIn("/quit\r")
	term.exitOK()
}

// BenchmarkSpawnToPrompt is a person's wait for kin chat: from starting the
// binary at a terminal to the prompt on screen, ready for typing (which
// includes starting kin serve and initialize). The median over operations
// is reported. With KIN_CHAT_BENCH_OTHER set to another kin binary, each
// operation also times that one, alternating, and reports its median and
// the median of the differences (this build minus the other).
func BenchmarkSpawnToPrompt(b *testing.B) {
	e := newEnv(b)
	other := os.Getenv("KIN_CHAT_BENCH_OTHER")
	var waits, others, diffs rpctest.Samples
	once := func(bin string) time.Duration {
		start := time.Now()
		term := e.terminalWith(b, bin, termCols, termRows)
		term.awaitPrompt("You> ")
		d := time.Since(start)
		b.StopTimer()
		term.typeIn("/quit\r")
		if err := term.waitExit(); err != nil {
			b.Fatalf("kin chat exited with %v", err)
		}
		b.StartTimer()
		return d
	}
	for i := 0; b.Loop(); i++ {
		if other == "" {
			waits.Add(once(kin(b)))
			continue
		}
		var d, o time.Duration
		if i%2 == 0 { // neither always goes first
			d, o = once(kin(b)), once(other)
		} else {
			o, d = once(other), once(kin(b))
		}
		waits.Add(d)
		others.Add(o)
		diffs.Add(d - o)
	}
	waits.Report(b, "ms/spawn-prompt")
	if other != "" {
		others.Report(b, "other-ms/spawn-prompt")
		b.ReportMetric(float64(diffs.Median().Microseconds())/1000, "diff-ms")
	}
}
