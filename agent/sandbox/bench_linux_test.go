//go:build linux

package sandbox

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/boundary"
)

// BenchmarkStartup is what confining costs a command: spawn to the first
// byte of output of `echo ok` (what a person waits for), and spawn to the
// exit of `true` (which also counts tearing the namespaces down), for
// /bin/sh unconfined and under bubblewrap with the policy kin uses for a
// workspace of 2,000 entries with a .git and a hidden $KIN_HOME (computed by the trust
// boundary for every command, as kin does), and with the plain policy kin
// used before (protection-*-ms is the difference). bwrap-release-ms is
// what a command's result waits for after its exit (the cleanup: the
// placeholders' removal is handed to the background), bwrap-settle-ms what
// remains of that removal then (Settle; a next command of kin within that
// time waits for it). scope-*-ms is what starting a confined command
// through the sandbox's scoped thread (Sandbox.Start, as kin does) adds
// over starting it directly. Each iteration runs every
// variant once, so load on the machine weighs on all alike; the metrics
// are medians, in milliseconds, and the added cost of the sandbox.
//
//	go test -run '^$' -bench Startup -benchtime 200x ./agent/sandbox
func BenchmarkStartup(b *testing.B) {
	root, _ := filepath.EvalSymlinks(b.TempDir())
	for _, d := range []string{".git/hooks", ".kin"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, ".git", "config"), nil, 0o644)
	// a workspace the size of a small repository (2,000 entries in 200
	// folders): the boundary walks it before every command, and an empty
	// one would hide what that costs
	for i := range 200 {
		d := filepath.Join(root, fmt.Sprintf("pkg%d", i%10), fmt.Sprintf("mod%d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		for j := range 9 {
			os.WriteFile(filepath.Join(d, fmt.Sprintf("file%d.go", j)), nil, 0o644)
		}
	}
	home := b.TempDir()
	sb := New(Config{Hidden: []string{home}, Cache: filepath.Join(home, "cache", "sandbox"), RunDir: filepath.Join(home, "run", "sandbox")})
	if !sb.Status().Confined {
		b.Skip(sb.Status().Reason)
	}
	type variant struct {
		name string
		make func(script string) (*exec.Cmd, func())
		// start is how kin starts it: a confined command through the
		// sandbox (in the scoped domain, a hop to its thread)
		start func(*exec.Cmd) error
	}
	// plain is the policy kin built before the trust boundary computed it:
	// the root writable with its .git pinned, .git/hooks, .git/config and
	// .kin read-only, kin's home hidden; no placeholders.
	plain := func(script string) (*exec.Cmd, func()) {
		p := Policy{Writable: []string{root, filepath.Join(root, ".git")}, Hidden: []string{home}, Cache: sb.CacheFor([]string{root}),
			ReadOnly: []string{filepath.Join(root, ".git", "hooks"), filepath.Join(root, ".git", "config"), filepath.Join(root, ".kin")}}
		cmd, cleanup, err := sb.Command(p, root, os.Environ(), "/bin/sh", "-c", script)
		if err != nil {
			b.Fatal(err)
		}
		return cmd, cleanup
	}
	confined := func(network bool) func(string) (*exec.Cmd, func()) {
		return func(script string) (*exec.Cmd, func()) {
			// the policy as kin builds it for every command: the boundary's
			// protection of the workspace, computed afresh
			ws, err := boundary.NewWorkspace([]string{root}, home)
			if err != nil {
				b.Fatal(err)
			}
			p := sb.For([]string{root}, network, ws.Protect(sb.Extra([]string{root})), ws.Secrets().Hidden())
			cmd, cleanup, err := sb.Command(p, root, os.Environ(), "/bin/sh", "-c", script)
			if err != nil {
				b.Fatal(err)
			}
			return cmd, cleanup
		}
	}
	variants := []variant{
		{"unconfined", func(script string) (*exec.Cmd, func()) {
			cmd := exec.Command("/bin/sh", "-c", script)
			cmd.Dir = root
			return cmd, func() {}
		}, (*exec.Cmd).Start},
		{"bwrap", confined(false), sb.Start},
		{"bwrap+net", confined(true), sb.Start},
		{"bwrap-plain", plain, sb.Start},
		// what the start through the scoped thread costs: the same
		// command started directly on the caller's thread, unscoped
		{"bwrap-unscoped", confined(false), (*exec.Cmd).Start},
	}
	first := make([][]time.Duration, len(variants))
	exit := make([][]time.Duration, len(variants))
	build := make([][]time.Duration, len(variants)) // the policy and command line alone, no process
	// what the command's result waits for after its exit (the cleanup a
	// tool calls before it returns), and what is left of it in the
	// background (Settle: the next command of kin waits for that, unless,
	// as between a person's commands, it is done by then)
	release := make([][]time.Duration, len(variants))
	settle := make([][]time.Duration, len(variants))
	for b.Loop() {
		for i, v := range variants {
			// spawn (building the policy and command line included) to
			// first output
			start := time.Now()
			cmd, cleanup := v.make("echo ok")
			pr, pw, _ := os.Pipe()
			cmd.Stdout = pw
			if err := v.start(cmd); err != nil {
				b.Fatal(err)
			}
			pw.Close()
			var one [1]byte
			if _, err := pr.Read(one[:]); err != nil {
				b.Fatal(err)
			}
			first[i] = append(first[i], time.Since(start))
			io.Copy(io.Discard, pr)
			pr.Close()
			cmd.Wait()
			cleanup()
			Settle()

			// spawn to exit
			start = time.Now()
			cmd, cleanup = v.make("true")
			build[i] = append(build[i], time.Since(start))
			if err := v.start(cmd); err != nil {
				b.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				b.Fatal(err)
			}
			exit[i] = append(exit[i], time.Since(start))
			start = time.Now()
			cleanup()
			release[i] = append(release[i], time.Since(start))
			start = time.Now()
			Settle()
			settle[i] = append(settle[i], time.Since(start))
		}
	}
	median := func(ds []time.Duration) float64 {
		s := append([]time.Duration(nil), ds...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return float64(s[len(s)/2]) / float64(time.Millisecond)
	}
	for i, v := range variants {
		b.ReportMetric(median(first[i]), v.name+"-first-ms")
		b.ReportMetric(median(exit[i]), v.name+"-exit-ms")
	}
	b.ReportMetric(median(first[1])-median(first[0]), "added-first-ms")
	b.ReportMetric(median(exit[1])-median(exit[0]), "added-exit-ms")
	b.ReportMetric(median(release[1]), "bwrap-release-ms")
	b.ReportMetric(median(settle[1]), "bwrap-settle-ms")
	// how much of it is kin's own work before bubblewrap starts: the
	// boundary's protection, the placeholders and the command line
	b.ReportMetric(median(build[1]), "bwrap-build-ms")
	b.ReportMetric(median(build[3]), "bwrap-plain-build-ms")
	// what the boundary's protection (placeholders, the allow-list, the
	// credentials hidden) adds over the plain policy
	b.ReportMetric(median(first[1])-median(first[3]), "protection-first-ms")
	b.ReportMetric(median(exit[1])-median(exit[3]), "protection-exit-ms")
	// what starting through the scoped thread adds (Sandbox.Start)
	b.ReportMetric(median(first[1])-median(first[4]), "scope-first-ms")
	b.ReportMetric(median(exit[1])-median(exit[4]), "scope-exit-ms")
}
