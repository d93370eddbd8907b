//go:build unix

package config_test

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kin-dev/kin/mcp/config"
)

// A mcp_secrets.json that is a FIFO made every load of the MCP
// configuration wait forever (no server of any scope started), and a
// project write with it too. Like the configuration files themselves, it
// is refused without waiting: the load goes on (the project's references
// are then said to be unset) and the write is an error.
func TestASecretsFileThatIsAFIFOIsNotWaitedOn(t *testing.T) {
	workdir, home := dirs(t)
	writeFile(t, config.ProjectPath(workdir), `{"mcpServers":{"p":{"command":"srv","env":{"T":"${T}"}}}}`)
	writeFile(t, config.GlobalPath(home), `{"mcpServers":{"g":{"command":"mine"}}}`)
	if err := syscall.Mkfifo(config.SecretsPath(home), 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan string, 1)
	go func() {
		cfg, err := config.Load(workdir, home, config.WithLookupEnv(envOf(nil)))
		if err != nil {
			done <- "Load: " + err.Error()
			return
		}
		done <- names(cfg.Servers) + " | " + warningsText(cfg)
	}()
	select {
	case got := <-done:
		if !strings.Contains(got, "g@global") || !strings.Contains(got, "T is not set") {
			t.Errorf("load: %s", got)
		}
	case <-time.After(time.Minute): // "forever", on a loaded machine too
		t.Fatal("Load waits on mcp_secrets.json")
	}
	werr := make(chan error, 1)
	go func() {
		werr <- config.NewStore(workdir, home).Add(config.ScopeProject, "q", json.RawMessage(`{"command":"x","env":{"K":"v"}}`))
	}()
	select {
	case err := <-werr:
		if err == nil {
			t.Error("a project secret was written over the FIFO")
		}
	case <-time.After(time.Minute): // "forever", on a loaded machine too
		t.Fatal("Add waits on mcp_secrets.json")
	}
}
