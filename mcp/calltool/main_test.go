package calltool_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/calltool"
	"github.com/kin-dev/kin/mcp/catalog"
	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/connect"
	"github.com/kin-dev/kin/mcp/mcptest"
	"github.com/kin-dev/kin/mcp/trust"
)

func TestMain(m *testing.M) { mcptest.Main(m) }

// binding is a fixed connection for tests.
type binding struct {
	name    string
	id      string
	conn    *connect.Conn
	dest    string
	timeout time.Duration
	asked   []*mcp.ElicitParams
	answer  func(*mcp.ElicitParams) *mcp.ElicitResult
}

func (b *binding) Name() string     { return b.name }
func (b *binding) Identity() string { return b.id }
func (b *binding) Launch() string   { return "launch:" + b.id }
func (b *binding) Trusted() bool    { return true }
func (b *binding) Session() (*mcp.ClientSession, bool) {
	if b.conn == nil {
		return nil, false
	}
	return b.conn.Session, true
}
func (b *binding) Destination() string { return b.dest }
func (b *binding) Timeout() time.Duration {
	if b.timeout == 0 {
		return calltool.DefaultTimeout
	}
	return b.timeout
}
func (b *binding) Redact(s string) string {
	if b.conn == nil {
		return s
	}
	return b.conn.Redact(s)
}
func (b *binding) Track(context.Context, tool.Env) func(string) { return func(string) {} }

// Elicit declines, or answers with b.answer.
func (b *binding) Elicit(_ context.Context, _ tool.Env, p *mcp.ElicitParams) *mcp.ElicitResult {
	b.asked = append(b.asked, p)
	if b.answer == nil {
		return &mcp.ElicitResult{Action: "decline"}
	}
	return b.answer(p)
}

// dial connects to srv and returns a binding; closed at the end of the test.
func dial(t testing.TB, srv config.Server) *binding {
	t.Helper()
	c, err := connect.Dial(context.Background(), srv, connect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &binding{name: srv.Name, id: trust.Hash(srv), conn: c, dest: srv.Display().Launch}
}

// tools vets the server's listing into calltool tools by server tool name.
func tools(t testing.TB, b *binding, autoAllow bool) map[string]*calltool.Tool {
	t.Helper()
	raws, err := catalog.List(context.Background(), b.conn.Session, catalog.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	defs, _, _ := catalog.Vet(b.name, raws, nil, catalog.NewNames(), b.Redact)
	out := map[string]*calltool.Tool{}
	for _, d := range defs {
		out[d.Name] = calltool.New(b, d, autoAllow && d.ReadOnly)
	}
	return out
}
