package mcptest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

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
//	env           tool env returns the server's environment, one per line
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
	var in io.Reader = os.Stdin
	switch name {
	case "crash":
		return 3
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
	t := &mcp.IOTransport{Reader: io.NopCloser(in), Writer: os.Stdout}
	if err := s.Run(context.Background(), t); err != nil {
		return 1
	}
	return 0
}
