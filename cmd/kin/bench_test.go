package main_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
)

// BenchmarkSpawnToInitialize measures an editor's wait: from starting the
// binary to reading the initialize reply.
func BenchmarkSpawnToInitialize(b *testing.B) {
	for i := 0; i < b.N; i++ {
		startAt := time.Now()
		p := startServe(b)
		p.send(req(1, "initialize", map[string]any{}))
		p.until(idIs(1))
		b.ReportMetric(float64(time.Since(startAt).Microseconds())/1000, "ms/spawn-init")
		p.stdin.Close()
		p.cmd.Wait()
	}
}

// BenchmarkServeRSS reports peak resident memory of kin serve after
// initialize (idle) and after one streamed turn.
func BenchmarkServeRSS(b *testing.B) {
	m := modeltest.New()
	defer m.Close()
	var idle, after float64
	for i := 0; i < b.N; i++ {
		m.Script(modeltest.Reply{Text: strings.Split(strings.Repeat("word ", 200), " ")})
		p := startServe(b, "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+m.URL())
		p.send(req(1, "initialize", map[string]any{}))
		p.until(idIs(1))
		idle = hwmKB(p.cmd.Process.Pid)
		p.send(req(2, "session/new", nil))
		sid := p.until(idIs(2))["result"].(map[string]any)["session"].(map[string]any)["sessionId"]
		p.send(req(3, "turn/start", map[string]any{"sessionId": sid, "input": "hi"}))
		p.until(func(m map[string]any) bool { return m["method"] == "turn/completed" })
		after = hwmKB(p.cmd.Process.Pid)
		p.stdin.Close()
		p.cmd.Wait()
	}
	b.ReportMetric(idle/1024, "MB-peak-idle")
	b.ReportMetric(after/1024, "MB-peak-after-turn")
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
