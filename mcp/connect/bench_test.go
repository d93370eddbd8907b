package connect_test

import (
	"context"
	"sync"
	"testing"

	"github.com/kin-dev/kin/mcp/connect"
	"github.com/kin-dev/kin/mcp/mcptest"
)

func dialN(b *testing.B, n int) {
	srv := mcptest.Stdio(b, "echo", nil)
	for b.Loop() {
		conns := make([]*connect.Conn, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := connect.Dial(context.Background(), srv, connect.Options{Env: kinEnv})
				if err != nil {
					b.Error(err)
					return
				}
				conns[i] = c
			}()
		}
		wg.Wait()
		b.StopTimer()
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
		b.StartTimer()
	}
}

// BenchmarkConnectStdio1 is spawn to initialized for one stdio server.
func BenchmarkConnectStdio1(b *testing.B) { dialN(b, 1) }

// BenchmarkConnectStdio20 connects 20 stdio servers at once.
func BenchmarkConnectStdio20(b *testing.B) { dialN(b, 20) }
