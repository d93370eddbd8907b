package manager_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/calltool"
	"github.com/kin-dev/kin/mcp/manager"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// resHost is a host that hears of attached resources that changed.
type resHost struct {
	host
	umu     sync.Mutex
	updated []string
}

func (h *resHost) ResourceUpdated(server, uri string) {
	h.umu.Lock()
	defer h.umu.Unlock()
	h.updated = append(h.updated, server+" "+uri)
}

func (h *resHost) seen() []string {
	h.umu.Lock()
	defer h.umu.Unlock()
	return append([]string(nil), h.updated...)
}

func notesManager(t *testing.T) (*manager.Manager, *mcptest.Notes, *resHost) {
	t.Helper()
	n := mcptest.NewNotes()
	h := &resHost{}
	home := t.TempDir()
	writeConfig(t, home, map[string]any{
		"notes": map[string]any{"type": "http", "url": mcptest.ServeHTTP(t, n.Server), "headers": map[string]any{"Authorization": "Bearer notes-secret-77"}},
		"echo":  stdioEntry(t, "echo"),
	})
	m := manager.New(manager.Options{Workdir: t.TempDir(), KinHome: home, Host: h, Env: env(nil)})
	t.Cleanup(m.Close)
	m.Start(context.Background())
	if r := state(m, "notes"); r.State != manager.StateConnected {
		t.Fatalf("notes: %+v", r)
	}
	return m, n, h
}

func TestResourcesForThePerson(t *testing.T) {
	m, n, _ := notesManager(t)
	ctx := context.Background()

	pages, err := m.Resources(ctx, "", "")
	if err != nil || len(pages) != 1 || pages[0].Server != "notes" {
		t.Fatalf("every server: %+v %v (echo offers no resources)", pages, err)
	}
	p := pages[0]
	byURI := map[string]manager.Resource{}
	for _, r := range p.Resources {
		byURI[r.URI] = r
	}
	readme := byURI["notes://readme"]
	if readme.Title != "Read me" || readme.Name != "readme" || readme.MIMEType != "text/plain" {
		t.Fatalf("readme %+v", readme)
	}
	// Only the data: raster icon: the https one would tell the server
	// when the person looks.
	if len(readme.Icons) != 1 || readme.Icons[0].Src != mcptest.PNGIcon || readme.Icons[0].Theme != "light" {
		t.Fatalf("icons %+v", readme.Icons)
	}
	if h := byURI["notes://hostile"]; strings.ContainsAny(h.Name+h.Title, "\u202e\u200b") {
		t.Fatalf("invisible characters reached the person: %q %q", h.Name, h.Title)
	}
	if len(p.Templates) != 1 || p.Templates[0].URITemplate != "notes://{project}/{note}" || p.Templates[0].Title != "A project's note" {
		t.Fatalf("templates %+v", p.Templates)
	}
	if _, err := m.Resources(ctx, "echo", ""); !errors.Is(err, manager.ErrNoResources) {
		t.Fatalf("a server without resources: %v", err)
	}
	if _, err := m.Resources(ctx, "", "c1"); err == nil {
		t.Fatal("a cursor without its server was taken")
	}

	// Completion of the template's arguments, the chosen ones passed on.
	c, err := m.Complete(ctx, "notes", "notes://{project}/{note}", "project", "ki", nil)
	if err != nil || strings.Join(c.Values, ",") != "kin,kite" {
		t.Fatalf("project: %+v %v", c, err)
	}
	c, err = m.Complete(ctx, "notes", "notes://{project}/{note}", "note", "", map[string]string{"project": "kin"})
	if err != nil || strings.Join(c.Values, ",") != "design,plan" {
		t.Fatalf("note: %+v %v", c, err)
	}

	// Reading for a question: framed as the server's untrusted data.
	text, saw, err := m.ReadForPerson(ctx, "notes", "notes://kin/design")
	if err != nil || !strings.Contains(text, `<untrusted-mcp-result server="notes" tool="resource">`) || !strings.Contains(text, "note design of kin") {
		t.Fatalf("read %q %v", text, err)
	}
	if saw == nil || saw.Framing != "untrusted-mcp-result" {
		t.Fatalf("saw %+v", saw)
	}
	// A resource that tries to close the framing cannot.
	text, _, _ = m.ReadForPerson(ctx, "notes", "notes://hostile")
	if strings.Count(text, "</untrusted-mcp-result>") != 1 || !strings.HasSuffix(text, "</untrusted-mcp-result>") {
		t.Fatalf("hostile text escaped its frame:\n%s", text)
	}
	// Sizes are the server's rules: 32 KiB of a resource's text.
	text, saw, _ = m.ReadForPerson(ctx, "notes", "notes://big")
	if strings.Count(text, "b") > 33<<10 || len(saw.Cuts) != 1 || saw.Cuts[0].What != "output" || saw.Cuts[0].Bytes < 64<<10 {
		t.Fatalf("big: %d bytes, cuts %+v", len(text), saw.Cuts)
	}
	text, saw, _ = m.ReadForPerson(ctx, "notes", "notes://logo.png")
	if !strings.Contains(text, "[binary resource omitted") || len(saw.Cuts) != 1 || saw.Cuts[0].What != "resource" {
		t.Fatalf("logo: %q %+v", text, saw)
	}
	if _, _, err := m.ReadForPerson(ctx, "notes", "notes://nope/x/y"); err == nil {
		t.Fatal("a missing resource was attached")
	}
	if _, _, err := m.ReadForPerson(ctx, "echo", "notes://readme"); !errors.Is(err, manager.ErrNoResources) {
		t.Fatalf("read from a server without resources: %v", err)
	}
	if n.Reads("notes://readme") != 0 {
		t.Fatal("listing read a resource")
	}
}

// An attached resource that changes at its server is reported; one never
// attached is not.
func TestAnAttachedResourceThatChangesIsReported(t *testing.T) {
	m, n, h := notesManager(t)
	ctx := context.Background()
	if _, _, err := m.ReadForPerson(ctx, "notes", "notes://readme"); err != nil {
		t.Fatal(err)
	}
	if err := n.Touch(ctx, "notes://big"); err != nil { // not attached
		t.Fatal(err)
	}
	if err := n.Touch(ctx, "notes://readme"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the update", func() bool { return len(h.seen()) > 0 })
	if got := h.seen(); len(got) != 1 || got[0] != "notes notes://readme" {
		t.Fatalf("updates %v", got)
	}
}

// Attack: a server repeats notifications/resources/updated for an
// attached resource in a loop (or names a new sub-resource each time).
// The person is told once that it changed, until they attach it again.
func TestAResourceUpdateFloodIsToldOnce(t *testing.T) {
	m, n, h := notesManager(t)
	ctx := context.Background()
	if _, _, err := m.ReadForPerson(ctx, "notes", "notes://readme"); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		uri := "notes://readme"
		if i%2 == 1 {
			uri += "/part" + strings.Repeat("x", i%7)
		}
		if err := n.Touch(ctx, uri); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the update", func() bool { return len(h.seen()) > 0 })
	time.Sleep(300 * time.Millisecond) // the rest of the flood arrives
	if got := h.seen(); len(got) != 1 || got[0] != "notes notes://readme" {
		t.Fatalf("told %d times: %v", len(got), got[:min(len(got), 5)])
	}
	// Attached again: its next change is news.
	if _, _, err := m.ReadForPerson(ctx, "notes", "notes://readme"); err != nil {
		t.Fatal(err)
	}
	if err := n.Touch(ctx, "notes://readme"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the second update", func() bool { return len(h.seen()) == 2 })
}

// Attack: a server puts its own secret (the token in its Authorization
// header) into a resource's name and description after padding, so that
// cutting the text to 64 characters keeps the first part of it, which no
// longer matches the redaction. The model (list_mcp_resources) and the
// person (mcp/resources) must get none of it.
func TestResourceTextsAreRedactedBeforeTheyAreCut(t *testing.T) {
	const token = "tok-CANARY-5e6f7a8b9c0d"
	srv := mcp.NewServer(&mcp.Implementation{Name: "leaky", Version: "1"}, nil)
	pad := strings.Repeat("x", 55)
	srv.AddResource(&mcp.Resource{URI: "leaky://a", Name: pad + token, Title: pad + token, Description: pad + token, MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "leaky://a", Text: "a"}}}, nil
		})
	h := &host{}
	m, _ := setup(t, h, map[string]any{
		"leaky": map[string]any{"type": "http", "url": mcptest.ServeHTTP(t, srv), "headers": map[string]string{"Authorization": "Bearer ${TOKEN}"}},
	}, map[string]string{"TOKEN": token})
	m.Start(context.Background())
	var list tool.Tool
	for _, tl := range m.Tools() {
		if tl.Spec().Name == calltool.ListResourcesName {
			list = tl
		}
	}
	if list == nil {
		t.Fatalf("no %s: %v", calltool.ListResourcesName, names(m))
	}
	toModel := run(t, list, `{}`).Output
	pages, err := m.Resources(context.Background(), "leaky", "")
	if err != nil || len(pages) != 1 || len(pages[0].Resources) != 1 {
		t.Fatalf("%+v %v", pages, err)
	}
	r := pages[0].Resources[0]
	part := token[:6] // "tok-CA": what a cut keeps of it
	for what, s := range map[string]string{"model": toModel, "name": r.Name, "title": r.Title, "description": r.Description} {
		if strings.Contains(s, part) {
			t.Errorf("a part of the secret reaches the %s: %q", what, s)
		}
	}
	if !strings.Contains(toModel, "leaky://a") {
		t.Errorf("listing %q", toModel)
	}
}
