package main_test

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// BenchmarkSpawnToInitialize measures an editor's wait: from starting the
// binary to reading the initialize reply. The median over operations is
// reported.
func BenchmarkSpawnToInitialize(b *testing.B) {
	var waits rpctest.Samples
	for b.Loop() {
		startAt := time.Now()
		p := startServe(b)
		p.send(req(1, "initialize", map[string]any{}))
		p.until(idIs(1))
		waits.Since(startAt)
		b.StopTimer()
		p.stdin.Close()
		p.cmd.Wait()
		b.StartTimer()
	}
	waits.Report(b, "ms/spawn-init")
}

// BenchmarkRelayPerDelta is the CPU a process spends carrying one streamed
// delta from the model's SSE stream to a frame on stdout, for kin serve
// (whole process: SSE decoding, the turn, the notification) and for the
// cheapest possible relay through the same libraries (rpc/rpctest/
// relayfloor): "floor" decodes each event into the two fields a relay
// needs, "sdk-floor" into openai-go's full event union as kin's model client
// does, which shows how much of kin's cost that decoding is. Target: kin
// within 2x of the floor.
//
// The mock model runs in the benchmark's process and the editor's side is
// the benchmark reading stdout, so neither is counted: only the relaying
// process's own CPU (user+system, from its rusage once it exited). Each
// relay runs twice per operation, with few and with many deltas, and the
// difference is divided, so start-up and a turn's fixed costs cancel out;
// the three relays alternate within an operation, so a busy machine slows
// them alike, and the ratio is taken per operation. Medians are reported.
func BenchmarkRelayPerDelta(b *testing.B) {
	floorBin := filepath.Join(b.TempDir(), "relayfloor")
	if out, err := exec.Command("go", "build", "-o", floorBin, "../../rpc/rpctest/relayfloor").CombinedOutput(); err != nil {
		b.Fatalf("building relayfloor: %v\n%s", err, out)
	}
	m := modeltest.New()
	defer m.Close()
	perDelta := func(run func(n int) time.Duration) time.Duration {
		few, many := run(fewDeltas), run(manyDeltas)
		return (many - few) / (manyDeltas - fewDeltas)
	}
	var kin, floor, sdkFloor rpctest.Samples
	var ratio []float64
	for b.Loop() {
		k := perDelta(func(n int) time.Duration { return kinTurnCPU(b, m, n) })
		f := perDelta(func(n int) time.Duration { return floorCPU(b, floorBin, "", m, n) })
		sf := perDelta(func(n int) time.Duration { return floorCPU(b, floorBin, "-sdk-events", m, n) })
		kin.Add(k)
		floor.Add(f)
		sdkFloor.Add(sf)
		ratio = append(ratio, float64(k)/float64(f))
	}
	kin.ReportMicros(b, "kin-cpu-us/delta")
	floor.ReportMicros(b, "floor-cpu-us/delta")
	sdkFloor.ReportMicros(b, "sdk-floor-cpu-us/delta")
	b.ReportMetric(medianOf(ratio), "kin/floor")
}

const (
	fewDeltas  = 500
	manyDeltas = 20_500
)

func deltas(n int) []string { return strings.Split(strings.Repeat("tok ", n), " ")[:n] }

// kinTurnCPU runs one turn of n deltas in a fresh kin serve and returns the
// CPU kin used, from spawn to exit.
func kinTurnCPU(b *testing.B, m *modeltest.Server, n int) time.Duration {
	m.Script(modeltest.Reply{Text: deltas(n)})
	p := startServe(b, "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+m.URL())
	p.send(req(1, "initialize", map[string]any{}))
	p.until(idIs(1))
	p.send(req(2, "session/new", nil))
	sid := p.until(idIs(2))["result"].(map[string]any)["session"].(map[string]any)["sessionId"]
	p.send(req(3, "turn/start", map[string]any{"sessionId": sid, "input": "long"}))
	skipUntil(b, p.out, `"method":"turn/completed"`)
	p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	return cpu(p.cmd)
}

// floorCPU runs the floor relay on one answer of n deltas.
func floorCPU(b *testing.B, bin, flag string, m *modeltest.Server, n int) time.Duration {
	m.Script(modeltest.Reply{Text: deltas(n)})
	args := []string{m.URL()}
	if flag != "" {
		args = append([]string{flag}, args...)
	}
	cmd := exec.Command(bin, args...)
	out, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	skipUntil(b, bufio.NewReader(out), `"method":"turn/completed"`)
	if err := cmd.Wait(); err != nil {
		b.Fatalf("%v: %s", err, stderr.String())
	}
	return cpu(cmd)
}

func cpu(cmd *exec.Cmd) time.Duration {
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// skipUntil reads frames, as cheaply as it can (the editor's side must not
// slow the relay), until one contains marker.
func skipUntil(b *testing.B, r *bufio.Reader, marker string) {
	var body []byte
	for {
		length := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				b.Fatalf("reading frames: %v", err)
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				length, _ = strconv.Atoi(v)
			}
		}
		if length < 0 {
			b.Fatal("a frame without Content-Length")
		}
		if cap(body) < length {
			body = make([]byte, length)
		}
		body = body[:length]
		if _, err := io.ReadFull(r, body); err != nil {
			b.Fatal(err)
		}
		if bytes.Contains(body, []byte(marker)) {
			return
		}
	}
}

// BenchmarkServeRSS reports peak resident memory of kin serve after
// initialize (idle) and after one streamed turn, medians over operations.
func BenchmarkServeRSS(b *testing.B) {
	m := modeltest.New()
	defer m.Close()
	var idle, after []float64
	for b.Loop() {
		m.Script(modeltest.Reply{Text: strings.Split(strings.Repeat("word ", 200), " ")})
		p := startServe(b, "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+m.URL())
		p.send(req(1, "initialize", map[string]any{}))
		p.until(idIs(1))
		idle = append(idle, hwmKB(p.cmd.Process.Pid))
		p.send(req(2, "session/new", nil))
		sid := p.until(idIs(2))["result"].(map[string]any)["session"].(map[string]any)["sessionId"]
		p.send(req(3, "turn/start", map[string]any{"sessionId": sid, "input": "hi"}))
		p.until(func(m map[string]any) bool { return m["method"] == "turn/completed" })
		after = append(after, hwmKB(p.cmd.Process.Pid))
		p.stdin.Close()
		p.cmd.Wait()
	}
	b.ReportMetric(medianOf(idle)/1024, "MB-peak-idle")
	b.ReportMetric(medianOf(after)/1024, "MB-peak-after-turn")
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	return s[len(s)/2]
}

// hwmKB reads VmHWM (peak RSS) of a process in KiB.
func hwmKB(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[1], 64)
			return v
		}
	}
	return 0
}
