// Command kinbench measures kin serve against the floor program (a Go
// program that answers initialize and nothing else, rpc/rpctest/initfloor),
// the floor of kin's required packages (the same answer from a program that
// links and sets up jsonrpc2, zap, openai-go and the MCP SDK,
// rpc/rpctest/depsfloor: what their initializers cost before kin's own
// code runs) and against the previous release built from an older commit of this
// repository, interleaved round by round so a busy machine weighs on all of
// them alike, and prints medians, spreads (p25-p75) and ratios. It only
// reports: timing never fails it (noisy machines make absolute numbers
// meaningless; the ratios are what to read). For kin alone it also times a
// turn that runs bash `true`, confined against unconfined (confined.go), and
// the first such turn of a fresh kin, a second after its session opened
// (first.go).
//
//	go run ./cmd/kinbench [-rounds 15] [-prev c4e6a9d] [-sessions 10000] [-turns 50]
//
// It is a development tool, not part of kin.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/session"
)

func main() {
	rounds := flag.Int("rounds", 15, "rounds of every measurement")
	prev := flag.String("prev", "c4e6a9d", "commit of the previous release to build and compare (\"\" for none)")
	nSessions := flag.Int("sessions", 10000, "stored sessions for session/list")
	turns := flag.Int("turns", 50, "turns for the memory after turns")
	flag.Parse()
	if err := run(*rounds, *prev, *nSessions, *turns); err != nil {
		fmt.Fprintln(os.Stderr, "kinbench:", err)
		os.Exit(1) // a build failed: not a timing
	}
}

type bin struct{ name, path string }

func run(rounds int, prev string, nSessions, turns int) error {
	tmp, err := os.MkdirTemp("", "kinbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	kin := bin{"kin", filepath.Join(tmp, "kin")}
	floor := bin{"floor", filepath.Join(tmp, "floor")}
	deps := bin{"deps", filepath.Join(tmp, "depsfloor")}
	if err := goBuild(".", kin.path, "./cmd/kin"); err != nil {
		return err
	}
	if err := goBuild(".", floor.path, "./rpc/rpctest/initfloor"); err != nil {
		return err
	}
	if err := goBuild(".", deps.path, "./rpc/rpctest/depsfloor"); err != nil {
		return err
	}
	kins := []bin{kin}
	if prev != "" {
		p, err := buildPrev(tmp, prev)
		if err != nil {
			fmt.Fprintf(os.Stderr, "kinbench: no previous release (%v); kin and the floor only\n", err)
		} else {
			kins = append(kins, p)
		}
	}
	for _, b := range append(kins, floor, deps) {
		uncache(b.path)
		if st, err := os.Stat(b.path); err == nil {
			fmt.Printf("%-6s %s  %.1f MB\n", b.name, b.path, float64(st.Size())/1e6)
		}
	}
	m := modeltest.New()
	defer m.Close()

	t := table{}
	// spawn to initialize, and memory after it
	for r := range rounds {
		for _, b := range rotated(append(kins, floor, deps), r) {
			home, _ := os.MkdirTemp(tmp, "home-")
			p, err := start(b.path, home, m.URL())
			if err != nil {
				return err
			}
			at := time.Now()
			p.call("initialize", map[string]any{})
			t.add("spawn to initialize (ms)", b.name, ms(time.Since(at)))
			t.add("RSS after initialize (MiB)", b.name, p.rssMiB())
			// The process's own memory: RSS less the binary's pages, which
			// the page cache shares with every other kin.
			t.add("private memory after it (MiB)", b.name, statusKB(p.cmd.Process.Pid, "RssAnon:")/1024)
			p.close()
		}
	}
	// session/list of many sessions, cold (a fresh kin's first) and warm
	home := filepath.Join(tmp, "many")
	if err := writeSessions(home, nSessions); err != nil {
		return err
	}
	for r := range rounds {
		for _, b := range rotated(kins, r) {
			p, err := start(b.path, home, m.URL())
			if err != nil {
				return err
			}
			p.call("initialize", map[string]any{})
			at := time.Now()
			n := len(p.call("session/list", map[string]any{}))
			if r > 0 { // the first round builds the index
				t.add(fmt.Sprintf("session/list of %d, cold (ms)", nSessions), b.name, ms(time.Since(at)))
			}
			at = time.Now()
			p.call("session/list", map[string]any{})
			t.add(fmt.Sprintf("session/list of %d, warm (ms)", nSessions), b.name, ms(time.Since(at)))
			t.add("session/list answer (KB)", b.name, float64(n)/1e3)
			p.close()
		}
	}
	// echo turns: CPU per warm turn, request size, memory after many turns
	for r := range max(3, rounds/3) {
		for _, b := range rotated(kins, r) {
			home, _ := os.MkdirTemp(tmp, "home-")
			p, err := start(b.path, home, m.URL())
			if err != nil {
				return err
			}
			p.call("initialize", map[string]any{})
			sid := p.newSession(map[string]any{})
			turn := func(i int) {
				m.Script(modeltest.Reply{Text: []string{"echo ", strconv.Itoa(i)}})
				p.call("turn/start", map[string]any{"sessionId": sid, "input": "echo " + strconv.Itoa(i)})
				p.until(`"method":"turn/completed"`)
			}
			turn(0) // the first builds what later turns reuse
			before, reqs := p.cpu(), len(m.Requests())
			const warm = 20
			for i := 1; i <= warm; i++ {
				turn(i)
			}
			t.add("CPU per warm echo turn (ms)", b.name, ms(p.cpu()-before)/warm)
			if rs := m.Requests(); len(rs) > reqs {
				t.add("request size (KB)", b.name, float64(len(rs[len(rs)-1].Raw))/1e3)
			}
			for i := warm + 1; i < turns; i++ {
				turn(i)
			}
			t.add(fmt.Sprintf("RSS after %d turns (MiB)", turns), b.name, p.rssMiB())
			t.add("private memory after them (MiB)", b.name, statusKB(p.cmd.Process.Pid, "RssAnon:")/1024)
			p.close()
		}
	}
	// a bash command's turn, confined against unconfined
	confinedRounds(&t, tmp, kins, m, rounds)
	t.print(kins, floor, deps)
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// goBuild builds as the editors do (editors/vscode/scripts/package.mjs,
// editors/nvim/lua/kin/build.lua): without cgo, so kin is a static binary
// that starts without the dynamic loader and libc (about 2 ms and 1.4 MiB
// of the numbers measured otherwise).
// rotated is bs starting at its r-th (round r's order): the order within a
// round weighed on the numbers (kin against the very same kin, always
// first, read 0.93x spawn to initialize), so each goes first in turn.
func rotated(bs []bin, r int) []bin {
	k := r % len(bs)
	return append(append([]bin(nil), bs[k:]...), bs[:k]...)
}

func goBuild(dir, out, pkg string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// buildPrev builds kin from an older commit in a temporary worktree.
func buildPrev(tmp, commit string) (bin, error) {
	wt := filepath.Join(tmp, "prev-src")
	if b, err := exec.Command("git", "worktree", "add", "--detach", wt, commit).CombinedOutput(); err != nil {
		return bin{}, fmt.Errorf("git worktree add %s: %v: %s", commit, err, strings.TrimSpace(string(b)))
	}
	defer exec.Command("git", "worktree", "remove", "--force", wt).Run()
	b := bin{"prev", filepath.Join(tmp, "kin-prev")}
	return b, goBuild(wt, b.path, "./cmd/kin")
}

// writeSessions writes n one-turn session logs, as kin would have.
func writeSessions(home string, n int) error {
	dir := filepath.Join(home, "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("s_20261101T000000_%06x", i)
		t := at.Add(time.Duration(i) * time.Minute)
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.Encode(session.Record{Type: session.TypeSession, SessionID: id, Title: fmt.Sprintf("session number %d about something", i), Time: t, Roots: []string{"/home/ana/src/app"}})
		enc.Encode(session.Record{Type: session.TypeUser, TurnID: "t_1", Text: "hello", Time: t})
		enc.Encode(session.Record{Type: session.TypeAssist, TurnID: "t_1", Text: "hi", Time: t})
		enc.Encode(session.Record{Type: session.TypeTurn, TurnID: "t_1", Status: "completed", Time: t})
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(b.String()), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// proc is kin serve (or the floor) over pipes.
type proc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func start(path, home, modelURL string) (*proc, error) {
	cmd := exec.Command(path, "serve")
	cmd.Dir = home
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "KIN_HOME=" + home,
		"OPENAI_API_KEY=sk-bench", "OPENAI_BASE_URL=" + modelURL, "KIN_MODEL=mock-1"}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &proc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

// send sends a request without waiting for its answer.
func (p *proc) send(method string, params any) {
	p.id++
	p.write(map[string]any{"jsonrpc": "2.0", "id": p.id, "method": method, "params": params})
}

func (p *proc) notify(method string, params any) {
	p.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

func (p *proc) write(msg map[string]any) {
	body, _ := json.Marshal(msg)
	fmt.Fprintf(p.in, "Content-Length: %d\r\n\r\n%s", len(body), body)
}

// call sends a request and returns its result, skipping notifications.
func (p *proc) call(method string, params any) json.RawMessage {
	p.send(method, params)
	want := `"id":` + strconv.Itoa(p.id) + `,`
	for {
		f := p.frame()
		if f == nil {
			return nil
		}
		if strings.Contains(string(f), want) && !strings.Contains(string(f), `"method"`) {
			var r struct {
				Result json.RawMessage `json:"result"`
			}
			json.Unmarshal(f, &r)
			return r.Result
		}
	}
}

// newSession opens a session with params and returns its id.
func (p *proc) newSession(params map[string]any) string {
	var res struct {
		Session struct{ SessionID string } `json:"session"`
	}
	json.Unmarshal(p.call("session/new", params), &res)
	return res.Session.SessionID
}

func (p *proc) until(marker string) {
	for {
		f := p.frame()
		if f == nil || strings.Contains(string(f), marker) {
			return
		}
	}
}

func (p *proc) frame() []byte {
	n := -1
	for {
		line, err := p.out.ReadString('\n')
		if err != nil {
			return nil
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			n, _ = strconv.Atoi(v)
		}
	}
	b := make([]byte, max(n, 0))
	if _, err := io.ReadFull(p.out, b); err != nil {
		return nil
	}
	return b
}

// rssMiB is the process's resident memory now.
func (p *proc) rssMiB() float64 { return statusKB(p.cmd.Process.Pid, "VmRSS:") / 1024 }

// cpu is the CPU time the process's threads ran so far.
func (p *proc) cpu() time.Duration {
	// The CPU time each thread ran, in nanoseconds (schedstat's first
	// field): stat's utime and stime count 10 ms ticks, too coarse for a
	// few milliseconds a turn (20 turns read to 0.5 ms). Go keeps its
	// threads for the process's life, so the sum over them is the
	// process's.
	dir := "/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			sum += time.Duration(ns)
		}
	}
	return sum
}

func (p *proc) close() {
	p.in.Close()
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}

func statusKB(pid int, key string) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, key) {
			v, _ := strconv.ParseFloat(strings.Fields(line)[1], 64)
			return v
		}
	}
	return 0
}

// table holds samples by metric and program, in the order metrics came.
type table struct {
	order []string
	s     map[string]map[string][]float64
}

func (t *table) add(metric, who string, v float64) {
	if t.s == nil {
		t.s = map[string]map[string][]float64{}
	}
	if t.s[metric] == nil {
		t.s[metric] = map[string][]float64{}
		t.order = append(t.order, metric)
	}
	t.s[metric][who] = append(t.s[metric][who], v)
}

func quantile(v []float64, q float64) float64 {
	s := slices.Sorted(slices.Values(v))
	return s[int(q*float64(len(s)-1)+0.5)]
}

func (t *table) print(kins []bin, floor, deps bin) {
	names := []string{}
	for _, b := range kins {
		names = append(names, b.name)
	}
	names = append(names, floor.name, deps.name)
	fmt.Printf("\n%-34s", "metric (median [p25-p75], n)")
	for _, n := range names {
		fmt.Printf(" %-24s", n)
	}
	fmt.Printf(" %-10s %-10s %-10s\n", "kin/floor", "kin/deps", "kin/prev")
	for _, metric := range t.order {
		fmt.Printf("%-34s", metric)
		med := map[string]float64{}
		for _, n := range names {
			v := t.s[metric][n]
			if len(v) == 0 {
				fmt.Printf(" %-24s", "-")
				continue
			}
			med[n] = quantile(v, 0.5)
			fmt.Printf(" %-24s", fmt.Sprintf("%.2f [%.2f-%.2f] %d", med[n], quantile(v, 0.25), quantile(v, 0.75), len(v)))
		}
		ratio := func(a, b string) string {
			if med[a] == 0 || med[b] == 0 {
				return "-"
			}
			return fmt.Sprintf("%.2fx", med[a]/med[b])
		}
		fmt.Printf(" %-10s %-10s %-10s\n", ratio("kin", "floor"), ratio("kin", "deps"), ratio("kin", "prev"))
	}
}
