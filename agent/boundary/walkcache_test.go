package boundary

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// settle makes every folder made so far older than the racy margin (shrunk
// for the test) and two ticks of any file system clock, so a walk after it
// trusts what it reads and a change after that gets a later ctime.
func settle(t *testing.T) {
	t.Helper()
	old := racyMargin
	racyMargin = 20 * time.Millisecond
	t.Cleanup(func() { racyMargin = old })
	time.Sleep(50 * time.Millisecond)
}

func freshReads() int {
	scans.Lock()
	defer scans.Unlock()
	return scans.fresh
}

// shown is a Protection as text, order aside, to compare two.
func shown(p Protection) string {
	s := func(v []string) []string { v = slices.Clone(v); slices.Sort(v); return v }
	var seeded []string
	for k, v := range p.Seeded {
		seeded = append(seeded, k+"="+v)
	}
	return fmt.Sprintf("ro %q\nmissing %q\npins %q\ngaps %q\nseeded %q", s(p.ReadOnly), s(p.Missing), s(p.Pins), s(p.Gaps), s(seeded))
}

// uncached is what a walk that reads every folder finds.
func uncached(t *testing.T, ws *Workspace) Protection {
	t.Helper()
	scans.Lock()
	saved := scans.m
	scans.m = map[[2]string]*scan{}
	scans.Unlock()
	p := ws.Protect(nil)
	scans.Lock()
	scans.m = saved
	scans.Unlock()
	return p
}

func mk(t *testing.T, path string, file bool) {
	t.Helper()
	if file {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

func timeKept(t *testing.T, dir string) {
	fi, err := os.Lstat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := stampOf(dir, fi); !ok {
		t.Skipf("%s: the walk does not reuse folders on this system or file system", dir)
	}
}

// An unchanged workspace is not read again: one lstat per folder.
func TestAWalkReusesUnchangedFolders(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	timeKept(t, root)
	for i := range 30 {
		mk(t, filepath.Join(root, fmt.Sprintf("pkg%d", i), "sub", "file.go"), true)
	}
	mk(t, filepath.Join(root, ".git", "hooks"), false)
	ws, err := NewWorkspace([]string{root}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	settle(t)
	first := ws.Protect(nil)
	before := freshReads()
	again := ws.Protect(nil)
	if n := freshReads() - before; n != 0 {
		t.Fatalf("the second walk read %d folders again, want none", n)
	}
	if shown(first) != shown(again) {
		t.Fatalf("the second walk found\n%s\nthe first\n%s", shown(again), shown(first))
	}
}

// Whatever a command (or anyone) changes between two walks, the reusing
// walk finds what a walk that reads everything finds: random changes of
// the kinds an attacker would make (a nested repository planted, a
// folder moved aside and replaced, secrets and runs-later files made,
// .gitmodules rewritten in place, symlinks), each after the previous walk
// trusted what it read.
func TestAWalkSeesEveryChange(t *testing.T) {
	t.Run("stamps read by the walk", seesEveryChange)
	t.Run("stamps read ahead", func(t *testing.T) {
		old := minAhead
		minAhead = 1 // the workspace has 13 folders, not a thousand
		t.Cleanup(func() { minAhead = old })
		seesEveryChange(t)
	})
}

func seesEveryChange(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	timeKept(t, root)
	ws, err := NewWorkspace([]string{root}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	dirs := []string{root}
	for i := range 12 {
		d := filepath.Join(dirs[rng.Intn(len(dirs))], fmt.Sprintf("d%d", i))
		mk(t, d, false)
		dirs = append(dirs, d)
	}
	pick := func() string { return dirs[rng.Intn(len(dirs))] }
	changes := []func() string{
		func() string { d := pick(); mk(t, filepath.Join(d, ".env"), true); return "secret in " + d },
		func() string { d := pick(); mk(t, filepath.Join(d, "AGENTS.md"), true); return "AGENTS.md in " + d },
		func() string {
			d := pick()
			mk(t, filepath.Join(d, ".git", "hooks"), false)
			mk(t, filepath.Join(d, ".git", "config"), true)
			return "repository in " + d
		},
		func() string {
			d := pick()
			mk(t, filepath.Join(d, ".github", "workflows", "ci.yml"), true)
			return "workflow in " + d
		},
		func() string {
			d := pick()
			if d == root {
				return "nothing"
			}
			os.RemoveAll(d + ".old")
			if err := os.Rename(d, d+".old"); err != nil {
				return "nothing"
			}
			mk(t, filepath.Join(d, ".git", "hooks"), false)
			mk(t, filepath.Join(d, "id_rsa"), true)
			return "swapped " + d
		},
		func() string {
			d := pick()
			sub := fmt.Sprintf("m%d", rng.Intn(3))
			mk(t, filepath.Join(d, ".gitmodules"), true)
			os.WriteFile(filepath.Join(d, ".gitmodules"), []byte("[submodule \"x\"]\n\tpath = "+sub+"\n"), 0o644)
			return ".gitmodules rewritten in " + d
		},
		func() string {
			d := pick()
			os.Symlink(filepath.Join(root, "d0"), filepath.Join(d, fmt.Sprintf("link%d", rng.Intn(3))))
			return "symlink in " + d
		},
		func() string {
			d := pick()
			mk(t, filepath.Join(d, "node_modules", ".env"), true)
			return "skipped folder in " + d
		},
		func() string {
			d := pick()
			os.RemoveAll(filepath.Join(d, ".env"))
			os.RemoveAll(filepath.Join(d, ".git"))
			return "removed from " + d
		},
	}
	settle(t)
	for round := range 25 {
		got := ws.Protect(nil) // reuses what the last round read
		if want := uncached(t, ws); shown(got) != shown(want) {
			t.Fatalf("round %d: the reusing walk found\n%s\nreading everything finds\n%s", round, shown(got), shown(want))
		}
		time.Sleep(30 * time.Millisecond) // what it read is trusted now
		what := changes[rng.Intn(len(changes))]()
		t.Logf("round %d: %s", round, strings.TrimPrefix(what, root))
	}
}

// Walks of one workspace from many commands at once (go test -race).
func TestWalksAtOnce(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	for i := range 20 {
		mk(t, filepath.Join(root, fmt.Sprintf("p%d", i), ".env"), true)
	}
	ws, err := NewWorkspace([]string{root}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := shown(ws.Protect(nil))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				if got := shown(ws.Protect(nil)); got != want {
					t.Errorf("a walk at once with others found\n%s\nwant\n%s", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkProtect is the walk before every confined command in a
// workspace of 2,000, 20,000 and 100,000 entries (a tenth of them folders, a
// .git, some .env files): the first walk of a kin process, which reads
// every folder (first-ms), and the ones after it, which reuse the folders
// unchanged since (again-ms). Medians in milliseconds.
//
//	go test -run '^$' -bench Protect -benchtime 20x ./agent/boundary
func BenchmarkProtect(b *testing.B) {
	for _, n := range []int{2000, 20000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			root, _ := filepath.EvalSymlinks(b.TempDir())
			for i := range n / 10 {
				d := filepath.Join(root, fmt.Sprintf("pkg%d", i%20), fmt.Sprintf("mod%d", i))
				if err := os.MkdirAll(d, 0o755); err != nil {
					b.Fatal(err)
				}
				for j := range 9 {
					name := fmt.Sprintf("file%d.go", j)
					if j == 0 && i%50 == 0 {
						name = ".env"
					}
					if err := os.WriteFile(filepath.Join(d, name), nil, 0o644); err != nil {
						b.Fatal(err)
					}
				}
			}
			os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755)
			ws, err := NewWorkspace([]string{root}, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			old := racyMargin
			racyMargin = 0 // what was just made counts as settled
			b.Cleanup(func() { racyMargin = old })
			time.Sleep(20 * time.Millisecond)
			var first, again []time.Duration
			for b.Loop() {
				scans.Lock()
				clear(scans.m)
				scans.Unlock()
				start := time.Now()
				ws.Protect(nil)
				first = append(first, time.Since(start))
				start = time.Now()
				ws.Protect(nil)
				again = append(again, time.Since(start))
			}
			median := func(ds []time.Duration) float64 {
				slices.Sort(ds)
				return float64(ds[len(ds)/2]) / float64(time.Millisecond)
			}
			b.ReportMetric(median(first), "first-ms")
			b.ReportMetric(median(again), "again-ms")
		})
	}
}

// Two walks of one workspace at once (the walk run ahead when a session
// opens, and a command that came before it ended) read each folder once
// between them: the second waits for the first and reuses what it kept.
func TestWalksOfOneWorkspaceTakeTurns(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	for i := range 1500 {
		if err := os.MkdirAll(filepath.Join(root, fmt.Sprintf("p%02d", i%30), fmt.Sprintf("m%04d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := NewWorkspace([]string{root}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	settle(t)
	before := freshReads()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { ws.Protect(nil) })
	}
	wg.Wait()
	if read := freshReads() - before; read != 1+30+1500 {
		t.Fatalf("two walks at once read %d folders, want each of the 1531 once", read)
	}
}
