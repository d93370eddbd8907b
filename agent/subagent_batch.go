package agent

import (
	"context"
	"sync"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/tool"
)

// delegations is how many of calls, from the first, the turn runs at once:
// the delegate calls one answer asks for in a row run side by side (each
// still waits for a free slot), as many as the turn's budget of calls
// allows; any other call runs alone.
func (t *turn) delegations(calls []model.Call, tools []tool.Tool) int {
	offered := false
	for _, tl := range tools {
		if tl.Spec().Name == DelegateToolName {
			offered = true
			break
		}
	}
	n := 0
	for _, c := range calls {
		if !offered || c.Name != DelegateToolName || t.calls+n >= t.budget {
			break
		}
		n++
	}
	return max(n, 1)
}

// callAll runs calls of one answer: recorded and shown in the order the
// model gave them, then run side by side, each recording its end as it
// comes. It returns when all have ended. same says the first came in the
// same answer as the call before it.
func (t *turn) callAll(ctx context.Context, calls []model.Call, tools []tool.Tool, same bool) {
	if len(calls) == 1 {
		t.call(ctx, calls[0], tools, same)
		return
	}
	var open []*openCall
	for i, c := range calls {
		if p := t.open(c, tools, same || i > 0); p != nil {
			open = append(open, p)
		}
	}
	var wg sync.WaitGroup
	for _, p := range open {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.settle(ctx, p)
		}()
	}
	wg.Wait()
}
