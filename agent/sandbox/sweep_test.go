package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// A kin killed while its command ran leaves its placeholders (an empty
// .mcp.json folder in the workspace) and seeded files; the next kin sweeps
// exactly those, keeps what has content since, and leaves alone what a
// live kin holds.
func TestSweepRemovesWhatAKilledKinLeft(t *testing.T) {
	run, ws := t.TempDir(), t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true")
	}
	deadPID := strconv.Itoa(dead.Process.Pid)

	placeholder := filepath.Join(ws, ".mcp.json")
	filled := filepath.Join(ws, ".envrc")
	seed := filepath.Join(ws, "commondir")
	changedSeed := filepath.Join(ws, "other")
	for _, d := range []string{placeholder, filled} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(filled, "kept"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(seed, []byte("../..\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(changedSeed, []byte("the person's now"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := markerDir(run, ws)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	lines := "p\t" + placeholder + "\n" + "p\t" + filled + "\n" +
		"s\t" + digest("../..\n") + "\t" + seed + "\n" + "s\t" + digest("../..\n") + "\t" + changedSeed + "\n"
	if err := os.WriteFile(filepath.Join(dir, deadPID), []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}

	// A live kin's marker (this process) in another folder: not swept.
	liveWS := t.TempDir()
	livePlaceholder := filepath.Join(liveWS, ".mcp.json")
	if err := os.Mkdir(livePlaceholder, 0o755); err != nil {
		t.Fatal(err)
	}
	journalDir := markerDir(run, liveWS)
	if err := os.MkdirAll(journalDir, 0o700); err != nil {
		t.Fatal(err)
	}
	journal(run, liveWS, []string{"p\t" + livePlaceholder})

	Sweep(run)
	if _, err := os.Lstat(placeholder); !os.IsNotExist(err) {
		t.Errorf("the killed kin's placeholder stayed: %v", err)
	}
	if _, err := os.Lstat(seed); !os.IsNotExist(err) {
		t.Errorf("the killed kin's seeded file stayed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(filled, "kept")); err != nil {
		t.Errorf("a folder with content was removed: %v", err)
	}
	if b, _ := os.ReadFile(changedSeed); string(b) != "the person's now" {
		t.Errorf("a file whose content changed was removed")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the swept marker folder stayed: %v", err)
	}
	if _, err := os.Stat(livePlaceholder); err != nil {
		t.Errorf("a live kin's placeholder was swept: %v", err)
	}
}
