package main

import (
	"fmt"
	"os"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
)

// firstPause is how long after opening a session the first command is
// asked for: a person reads and types for seconds before a model asks for
// a command; one second is on the short side.
const firstPause = time.Second

// firstRounds measures the first confined command of a kin: a fresh kin
// serve opens a session in the workspace ws, and firstPause later a turn's
// model calls bash `true` (its approval answered at once, so the editor's
// time is not in it). Before that command the boundary walks the whole
// workspace to find what to protect; a kin that looked at it when the
// session opened (agent.warmCommands) has that walk done by then. Rounds
// alternate which kin goes first.
func firstRounds(t *table, tmp string, kins []bin, m *modeltest.Server, rounds int, ws string) {
	for r := range rounds {
		for i := range kins {
			b := kins[(i+r)%len(kins)]
			home, _ := os.MkdirTemp(tmp, "home-")
			p, err := start(b.path, home, m.URL())
			if err != nil {
				fmt.Printf("first bash turn, %s: %v\n", b.name, err)
				return
			}
			p.call("initialize", map[string]any{})
			p.notify("initialized", map[string]any{})
			sid := p.newSession(map[string]any{"cwd": ws})
			time.Sleep(firstPause)
			d, err := p.bashTurn(m, sid, true, true)
			p.close()
			if err != nil {
				fmt.Printf("first bash turn, %s, round %d: %v\n", b.name, r, err)
				return
			}
			t.add("first bash `true` of a kin, confined (ms)", b.name, ms(d))
		}
	}
}
