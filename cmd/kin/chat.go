package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/kin-dev/kin/cmd/kin/chat"
	"github.com/kin-dev/kin/rpc"
)

// runChat is `kin chat`: the terminal front end (package chat) over a
// `kin serve` it starts, or one it attaches to with --connect.
func runChat(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	connect := fs.String("connect", "", "attach to `kin serve --listen` at this loopback address (127.0.0.1:PORT) instead of starting one")
	traceFile := fs.String("trace", "", "write every JSON-RPC message to this file, secrets masked")
	rawRPC := fs.Bool("rpc", false, "print every JSON-RPC message, secrets masked, to stderr")
	approveAll := fs.Bool("approve-all", false, "approve every tool call and server launch without asking (use with care)")
	worktree := fs.Bool("worktree", false, "work in a git worktree of this repository on a new branch (kin/<session>), under $KIN_HOME/worktrees; /worktree apply brings the changes back")
	branch := fs.String("branch", "", "with --worktree: the new branch's name")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: kin chat [--connect 127.0.0.1:PORT] [--trace FILE] [--rpc] [--approve-all] [--worktree [--branch NAME]] [QUESTION...]")
		fmt.Fprintln(fs.Output(), "With a QUESTION, kin chat asks it in a new session, shows the answer and exits: 0 when the turn completed.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return chat.ExitUsage
	}
	question := strings.TrimSpace(strings.Join(fs.Args(), " "))
	if fs.NArg() > 0 && question == "" {
		fmt.Fprintln(stderr, "kin chat: the question is empty")
		return chat.ExitUsage
	}

	if *branch != "" && !*worktree {
		fmt.Fprintln(stderr, "kin chat: --branch needs --worktree")
		return chat.ExitUsage
	}
	opts := chat.Options{
		In: stdin, Out: stdout, Err: stderr,
		ApproveAll:  *approveAll,
		RPC:         *rawRPC,
		Version:     version,
		Question:    question,
		HistoryFile: filepath.Join(kinHome(), "chat_history"),
	}
	if *worktree {
		opts.Worktree = &rpc.WorktreeRequest{Branch: *branch}
	}
	inFile, _ := stdin.(*os.File)
	outFile, _ := stdout.(*os.File)
	opts.Interactive = inFile != nil && chat.IsTerminal(inFile)
	outTTY := outFile != nil && chat.IsTerminal(outFile)
	if question != "" && !outTTY {
		// The answer alone on standard output, for a script or a file;
		// the rest (tool calls, approvals) on standard error.
		opts.Answer = stdout
		opts.Out = stderr
		outFile, _ = stderr.(*os.File)
		outTTY = outFile != nil && chat.IsTerminal(outFile)
	}
	opts.Color = outTTY && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	// The line editor needs a terminal on both sides that answers where
	// its cursor is (a "dumb" one, like Emacs's shell, does not).
	opts.Editor = chat.EditorSupported && opts.Interactive && outTTY && os.Getenv("TERM") != "dumb"
	opts.Cwd, _ = os.Getwd()

	if *connect != "" {
		conn, err := chat.Dial(*connect)
		if err != nil {
			fmt.Fprintf(stderr, "kin: --connect %s: %v\n", *connect, err)
			return chat.ExitUsage
		}
		opts.Conn = conn
		if *traceFile != "" {
			f, err := os.OpenFile(*traceFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				conn.Close()
				fmt.Fprintf(stderr, "kin: --trace: %v\n", err)
				return chat.ExitUsage
			}
			defer f.Close()
			opts.Trace = f
		}
	} else {
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintf(stderr, "kin: cannot find the kin binary to start the service: %v\n", err)
			return chat.ExitFailed
		}
		serveArgs := []string{"serve"}
		if logFile := chatLogFile(); logFile != "" {
			serveArgs = append(serveArgs, "--log-file", logFile)
		}
		if *traceFile != "" {
			serveArgs = append(serveArgs, "--trace", *traceFile)
		}
		opts.Spawn = chat.SpawnCommand(exe, serveArgs...)
	}

	// Ctrl-C is the chat's to handle (cancel the turn, deny the question on
	// screen, exit on the second at an idle prompt); the service runs in its
	// own process group and never sees it.
	interrupt := make(chan struct{}, 1)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	done := make(chan struct{})
	defer func() {
		signal.Stop(sig)
		close(done)
	}()
	go func() {
		for {
			select {
			case <-sig:
				select {
				case interrupt <- struct{}{}:
				default:
				}
			case <-done:
				return
			}
		}
	}()
	opts.Interrupt = interrupt
	// SIGTERM (kill, a supervisor, timeout(1)) and SIGHUP end kin chat
	// through Run's way out, which gives the terminal back as it was: it
	// is raw while kin chat runs, and a kin chat they simply killed left
	// the person's shell without echo. The exit code is the signal's, as
	// for a process it ended.
	ended := make(chan os.Signal, 1)
	signal.Notify(ended, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(ended)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var endedBy atomic.Value
	go func() {
		select {
		case s := <-ended:
			endedBy.Store(s)
			cancel()
		case <-done:
		}
	}()
	code := chat.Run(ctx, opts)
	if s, ok := endedBy.Load().(syscall.Signal); ok {
		return 128 + int(s)
	}
	return code
}

// chatLogFile is where the spawned service logs: $KIN_HOME/logs, or nowhere
// when that folder cannot be made.
func chatLogFile() string {
	dir := filepath.Join(kinHome(), "logs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ""
	}
	return filepath.Join(dir, "chat-serve.log")
}
