package manager_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/manager"
)

// These tests run real servers from npm. They need Node and either
// KIN_TEST_NPM_DIR (a folder whose node_modules/.bin holds
// mcp-server-everything and mcp-server-filesystem, installed with
// `npm install @modelcontextprotocol/server-everything
// @modelcontextprotocol/server-filesystem`) or npx with registry access.

// npmBin finds an npm package's binary, or skips the test. Under
// KIN_REQUIRE_NPM=1 (CI sets it) a missing package fails instead, so CI
// cannot go green by skipping the real servers.
func npmBin(t *testing.T, pkg, bin string) string {
	t.Helper()
	if os.Getenv("KIN_REQUIRE_NPM") == "1" {
		dir := os.Getenv("KIN_TEST_NPM_DIR")
		p := filepath.Join(dir, "node_modules", ".bin", bin)
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("KIN_REQUIRE_NPM=1 but %s is missing (KIN_TEST_NPM_DIR=%q): run npm ci in .ci/npm", p, dir)
		}
		return p
	}
	if testing.Short() {
		t.Skip("npm servers skipped in -short mode")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: npm MCP server tests skipped")
	}
	if dir := os.Getenv("KIN_TEST_NPM_DIR"); dir != "" {
		p := filepath.Join(dir, "node_modules", ".bin", bin)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		t.Skipf("KIN_TEST_NPM_DIR=%s has no node_modules/.bin/%s: run `npm install --prefix %s %s`", dir, bin, dir, pkg)
	}
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skipf("neither KIN_TEST_NPM_DIR nor npx is available: %s tests skipped", pkg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "npx", "-y", "-p", pkg, "-c", "command -v "+bin).Output()
	p := strings.TrimSpace(string(out))
	if err != nil || p == "" {
		t.Skipf("npx could not provide %s (%v): set KIN_TEST_NPM_DIR to a folder with it installed", pkg, err)
	}
	return p
}

const everything = "@modelcontextprotocol/server-everything"

// npmStart bounds the start of an npm server in these tests: Node takes
// 10 s and more to start one on a loaded 2-core machine (CI runs every
// package at once), past connect.ConnectTimeout. The tests are about what
// kin does with the servers, not how fast Node starts them.
const npmStart = patientConnect

func checkEverything(t *testing.T, h *host, m *manager.Manager, name string) {
	t.Helper()
	pre := "mcp__" + name + "__"
	if r := run(t, toolNamed(m, pre+"echo"), `{"message":"hello"}`); r.Status != tool.StatusCompleted || !strings.Contains(r.Output, "Echo: hello") {
		t.Fatalf("echo: %+v", r)
	}
	if r := run(t, toolNamed(m, pre+"get-tiny-image"), `{}`); r.Status != tool.StatusCompleted || !strings.Contains(r.Output, "[image omitted: image/png, ") {
		t.Errorf("image: %+v", r)
	}
	if r := run(t, toolNamed(m, pre+"get-structured-content"), `{"location":"New York"}`); r.Status != tool.StatusCompleted || !strings.Contains(r.Output, "emperature") {
		t.Errorf("structured: %+v", r)
	}
	// Conditional tools are registered after initialization: a list change.
	eventually(t, "conditional tools", func() bool { return toolNamed(m, pre+"trigger-elicitation-request") != nil })
	if approval(t, m, pre+"trigger-elicitation-request").AutoAllow {
		t.Error("late tool auto-allowed")
	}
	// Its standard form uses every field kind of the current elicitation
	// schema, multi-selects included: it reaches the person, and a valid
	// answer reaches the server.
	h.mu.Lock()
	asked := len(h.elicits)
	h.answer = func(r manager.ElicitRequest) manager.ElicitResult {
		if r.Mode != "form" {
			return manager.ElicitResult{Action: "decline"}
		}
		return manager.ElicitResult{Action: "accept", Content: map[string]any{
			"name": "Ana", "check": true, "email": "ana@example.com", "birthdate": "1990-04-01", "integer": float64(7),
			"untitledMultipleSelectEnum": []any{"Piano", "Drums"}, "titledMultipleSelectEnum": []any{"fish-2", "fish-3"},
			"titledSingleSelectEnum": "hero-3", "legacyTitledEnum": "pet-2",
		}}
	}
	h.mu.Unlock()
	r := run(t, toolNamed(m, pre+"trigger-elicitation-request"), `{}`)
	if r.Status != tool.StatusCompleted || !strings.Contains(r.Output, "User provided the requested information") ||
		!strings.Contains(r.Output, "Name: Ana") || !strings.Contains(r.Output, `"fish-2"`) || !strings.Contains(r.Output, `"Drums"`) {
		t.Errorf("elicitation: %+v", r)
	}
	h.mu.Lock()
	if len(h.elicits) != asked+1 {
		t.Errorf("the standard form reached the person %d times", len(h.elicits)-asked)
	} else {
		var kinds []string
		for _, f := range h.elicits[asked].Fields {
			kinds = append(kinds, f.Name+":"+string(f.Type))
		}
		if got := strings.Join(kinds, " "); !strings.Contains(got, "titledMultipleSelectEnum:multi_select") ||
			!strings.Contains(got, "untitledMultipleSelectEnum:multi_select") || !strings.Contains(got, "legacyTitledEnum:enum") {
			t.Errorf("fields %s", got)
		}
	}
	h.answer = nil
	h.mu.Unlock()
	// URL mode reaches the person with the URL; kin opens nothing.
	if tl := toolNamed(m, pre+"trigger-url-elicitation"); tl != nil {
		r := run(t, tl, `{"url":"https://modelcontextprotocol.io","message":"Open this"}`)
		h.mu.Lock()
		var got *manager.ElicitRequest
		for i := range h.elicits {
			if h.elicits[i].Mode == "url" {
				got = &h.elicits[i]
			}
		}
		h.mu.Unlock()
		if got == nil || !strings.HasPrefix(got.URL, "https://") || got.Server != name {
			t.Errorf("url elicitation not relayed: %+v (result %.300s)", got, r.Output)
		}
	}
	// Resources.
	var list tool.Tool
	for _, tl := range m.Tools() {
		if tl.Spec().Name == "list_mcp_resources" {
			list = tl
		}
	}
	if list == nil {
		t.Fatal("no list_mcp_resources")
	}
	r = run(t, list, `{"server":"`+name+`"}`)
	if r.Status != tool.StatusCompleted || !strings.Contains(r.Output, "demo://") {
		t.Fatalf("list resources: %+v", r)
	}
}

func TestNPMEverythingStdio(t *testing.T) {
	bin := npmBin(t, everything, "mcp-server-everything")
	h := &host{}
	m := setupPatient(t, h, map[string]any{"everything": map[string]any{"command": bin, "args": []string{"stdio"}}})
	m.Start(context.Background())
	if r := state(m, "everything"); r.State != manager.StateConnected {
		t.Fatalf("not connected: %+v %v", r, h.notices)
	}
	checkEverything(t, h, m, "everything")
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestNPMEverythingStreamableHTTP(t *testing.T) {
	bin := npmBin(t, everything, "mcp-server-everything")
	port := freePort(t)
	cmd := exec.Command(bin, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	for deadline := time.Now().Add(npmStart); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			break
		}
		select {
		case <-exited:
			t.Fatalf("the http server exited before it listened on port %d", port)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the http server did not listen within %s: %v", npmStart, err)
		}
	}
	h := &host{}
	m := setupPatient(t, h, map[string]any{"ev": map[string]any{"type": "http", "url": url}})
	m.Start(context.Background())
	if r := state(m, "ev"); r.State != manager.StateConnected {
		t.Fatalf("not connected: %+v %v", r, h.notices)
	}
	checkEverything(t, h, m, "ev")
}

func TestNPMFilesystem(t *testing.T) {
	bin := npmBin(t, "@modelcontextprotocol/server-filesystem", "mcp-server-filesystem")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("kin was here"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := &host{}
	m := setupPatient(t, h, map[string]any{"files": map[string]any{"command": bin, "args": []string{dir}}})
	m.Start(context.Background())
	if r := state(m, "files"); r.State != manager.StateConnected {
		t.Fatalf("not connected: %+v %v", r, h.notices)
	}
	ap := approval(t, m, "mcp__files__list_directory")
	if !ap.AutoAllow || approval(t, m, "mcp__files__write_file").AutoAllow {
		t.Error("readOnlyHint from the initial list not honoured (or a write tool auto-allowed)")
	}
	if r := run(t, toolNamed(m, "mcp__files__list_directory"), `{"path":"`+dir+`"}`); !strings.Contains(r.Output, "notes.txt") {
		t.Fatalf("list_directory: %+v", r)
	}
	if r := run(t, toolNamed(m, "mcp__files__read_text_file"), `{"path":"`+filepath.Join(dir, "notes.txt")+`"}`); r.Status != tool.StatusCompleted || !strings.Contains(r.Output, "kin was here") {
		t.Fatalf("read: %+v", r)
	}
}

// server-everything's prompts are commands: listed with their arguments,
// fetched with them.
func TestNPMEverythingPrompts(t *testing.T) {
	bin := npmBin(t, everything, "mcp-server-everything")
	h := &host{}
	m := setupPatient(t, h, map[string]any{"everything": map[string]any{"command": bin, "args": []string{"stdio"}}})
	m.Start(context.Background())
	if r := state(m, "everything"); r.State != manager.StateConnected {
		t.Fatalf("not connected: %+v %v", r, h.notices)
	}
	var args *manager.Prompt
	names := map[string]bool{}
	for _, p := range m.Prompts() {
		names[p.Name] = true
		if p.Name == "args-prompt" {
			args = &p
		}
	}
	if !names["simple-prompt"] || args == nil {
		t.Fatalf("prompts %+v", m.Prompts())
	}
	if len(args.Arguments) != 2 || args.Arguments[0].Name != "city" || !args.Arguments[0].Required || args.Arguments[1].Required {
		t.Errorf("args-prompt arguments %+v", args.Arguments)
	}
	text, err := m.GetPrompt(context.Background(), "everything", "simple-prompt", nil)
	if err != nil || text != "This is a simple prompt without arguments." {
		t.Errorf("simple-prompt: %q %v", text, err)
	}
	text, err = m.GetPrompt(context.Background(), "everything", "args-prompt", map[string]string{"city": "Lisbon"})
	if err != nil || text != "What's weather in Lisbon?" {
		t.Errorf("args-prompt: %q %v", text, err)
	}
}
