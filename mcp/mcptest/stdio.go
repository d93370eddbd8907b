package mcptest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/mcp/config"
)

// EnvServer selects the stdio server a re-executed test binary runs.
const EnvServer = "KIN_MCPTEST_SERVER"

// Main runs the stdio server named by $KIN_MCPTEST_SERVER when it is set,
// and the tests otherwise. Call it from TestMain.
func Main(m *testing.M) {
	ServeIfAsked()
	os.Exit(m.Run())
}

// ServeIfAsked runs the stdio server named by $KIN_MCPTEST_SERVER and exits,
// when it is set; otherwise it returns. For a test binary whose TestMain
// does other things (call it from an init function there).
func ServeIfAsked() {
	if name := os.Getenv(EnvServer); name != "" {
		os.Exit(serveStdio(name))
	}
}

// Stdio is a stdio server entry that re-executes the test binary as the
// named server:
//
//	echo          tools echo {query} and child_pid
//	sleeper       like echo, and starts `sleep 300` in its process group;
//	              child_pid returns the sleep's pid
//	setsid-sleeper like sleeper, but the sleep leaves the group (setsid)
//	discover-exit exits when the first message is server/discover, else echo
//	crash         exits at once
//	mute          writes its pid to $KIN_MCPTEST_PROBE, ignores SIGTERM and
//	              its stdin, and never answers: a server still starting
//	              that takes the whole stop sequence (SIGKILL) to end
//	env           tool env returns the server's environment, one per line
//	banner        like echo, after writing a banner, a blank line and a JSON
//	              log line on stdout before its first message (as time-mcp
//	              and pino-logging servers do), and a log line after each call
//	garbage       writes lines that are not JSON-RPC on stdout, and nothing
//	              else, until its stdout is closed
//	files         like echo, with tools write {path, text} and read {path},
//	              which answer with what happened (for the sandbox)
//	write-or-die  like files, after writing $KIN_MCPTEST_PROBE at start; when
//	              that fails it says why on stderr and exits 2
//	dial-or-die   like echo, after connecting to the TCP address
//	              $KIN_MCPTEST_PROBE at start and writing its name there; when
//	              that fails it says why on stderr and exits 2 (for the
//	              sandbox's network)
//	abstract-or-die like echo, after connecting to an abstract unix socket
//	              it listens on itself (when that fails it says why on
//	              stderr and exits 2), then to the host's abstract socket
//	              named $KIN_MCPTEST_PROBE (without its '@'), writing its
//	              name there when it connects (for the sandbox's scope)
func Stdio(t testing.TB, name string, env map[string]string) config.Server {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := map[string]string{EnvServer: name}
	for k, v := range env {
		e[k] = v
	}
	return config.Server{Name: name, Scope: config.ScopeGlobal, Transport: config.TransportStdio, Command: exe, Env: e}
}

func serveStdio(name string) int {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
	childPid := 0
	AddTool(s, "echo", "Echo the query.", false, func(_ context.Context, a map[string]any) (*mcp.CallToolResult, error) {
		return Text(fmt.Sprintf("echo: %v", a["query"])), nil
	})
	AddTool(s, "child_pid", "The pid of the child process.", true, func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
		return Text(strconv.Itoa(childPid)), nil
	})
	AddTool(s, "env", "The environment.", true, func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
		return Text(strings.Join(os.Environ(), "\n")), nil
	})
	if name == "files" || name == "write-or-die" {
		addFileTools(s)
	}
	var in io.Reader = os.Stdin
	var out io.WriteCloser = os.Stdout
	switch name {
	case "write-or-die":
		if err := os.WriteFile(os.Getenv("KIN_MCPTEST_PROBE"), []byte("x"), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "fatal:", err)
			return 2
		}
	case "dial-or-die":
		c, err := net.DialTimeout("tcp", os.Getenv("KIN_MCPTEST_PROBE"), 10*time.Second)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fatal:", err)
			return 2
		}
		fmt.Fprintln(c, name)
		c.Close()
	case "abstract-or-die":
		if err := abstractSelf(); err != nil {
			fmt.Fprintln(os.Stderr, "fatal: its own abstract socket:", err)
			return 2
		}
		if c, err := net.DialTimeout("unix", "@"+os.Getenv("KIN_MCPTEST_PROBE"), 5*time.Second); err == nil {
			fmt.Fprintln(c, name)
			c.Close()
		} else {
			fmt.Fprintln(os.Stderr, "the host's abstract socket:", err)
		}
	case "crash":
		return 3
	case "mute":
		signal.Ignore(syscall.SIGTERM)
		if err := os.WriteFile(os.Getenv("KIN_MCPTEST_PROBE"), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
			return 2
		}
		for {
			time.Sleep(time.Hour)
		}
	case "banner":
		fmt.Println("Starting Time MCP server...")
		fmt.Println()
		fmt.Println(`{"level":30,"msg":"listening on stdio"}`)
		out = chatty{os.Stdout}
	case "leaky-noise":
		// noise that holds the server's secret ($KIN_MCPTEST_SECRET) after
		// 70 or 190 bytes of padding, so that a line cut to 80 or 200
		// characters would keep a part of it
		for i := 0; ; i++ {
			pad := 70
			if i%2 == 1 {
				pad = 190
			}
			if _, err := fmt.Printf("%s%s\n", strings.Repeat("x", pad), os.Getenv("KIN_MCPTEST_SECRET")); err != nil {
				return 0
			}
		}
	case "garbage":
		for i := 0; ; i++ {
			if _, err := fmt.Printf("[%d] not a message, just noise\n", i); err != nil {
				return 0
			}
		}
	case "sleeper", "setsid-sleeper":
		cmd := exec.Command("sleep", "300")
		cmd.SysProcAttr = setsidAttr(name == "setsid-sleeper")
		if err := cmd.Start(); err != nil {
			return 4
		}
		childPid = cmd.Process.Pid
	case "discover-exit":
		br := bufio.NewReader(os.Stdin)
		line, err := br.ReadString('\n')
		if err != nil || strings.Contains(line, `"server/discover"`) {
			return 0
		}
		in = io.MultiReader(strings.NewReader(line), br)
	}
	t := &mcp.IOTransport{Reader: io.NopCloser(in), Writer: out}
	if err := s.Run(context.Background(), t); err != nil {
		return 1
	}
	return 0
}

// chatty writes a log line to stdout after every message, as a server that
// logs to the wrong stream does.
type chatty struct{ w io.WriteCloser }

func (c chatty) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err == nil && len(p) > 0 && p[len(p)-1] == '\n' {
		_, err = io.WriteString(c.w, "handled a message\n")
	}
	return n, err
}

func (c chatty) Close() error { return c.w.Close() }

// addFileTools adds write {path, text} and read {path}: each answers with
// what it did or the error the system gave.
func addFileTools(s *mcp.Server) {
	AddTool(s, "write", "Write text to a path.", false, func(_ context.Context, a map[string]any) (*mcp.CallToolResult, error) {
		p, _ := a["path"].(string)
		text, _ := a["text"].(string)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			return Text("error: " + err.Error()), nil
		}
		return Text("wrote " + p), nil
	})
	AddTool(s, "connect", "Connect to a unix socket.", true, func(_ context.Context, a map[string]any) (*mcp.CallToolResult, error) {
		p, _ := a["path"].(string)
		c, err := net.DialTimeout("unix", p, 5*time.Second)
		if err != nil {
			return Text("error: " + err.Error()), nil
		}
		c.Close()
		return Text("connected " + p), nil
	})
	AddTool(s, "read", "Read a path.", true, func(_ context.Context, a map[string]any) (*mcp.CallToolResult, error) {
		p, _ := a["path"].(string)
		b, err := os.ReadFile(p)
		if err != nil {
			return Text("error: " + err.Error()), nil
		}
		return Text("read: " + string(b)), nil
	})
}

// abstractSelf listens on an abstract unix socket of a fresh name and
// connects to it.
func abstractSelf() error {
	name := fmt.Sprintf("@kin-mcptest-self-%d-%d", os.Getpid(), time.Now().UnixNano())
	l, err := net.Listen("unix", name)
	if err != nil {
		return err
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := net.DialTimeout("unix", name, 5*time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}
