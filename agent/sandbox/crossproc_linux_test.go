//go:build linux

package sandbox

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// otherKinEnv makes the test binary act as a second kin process on the
// workspace it names (TestOtherKinHelper).
const otherKinEnv = "KIN_SANDBOX_OTHER_KIN"

// TestOtherKinHelper is not a test: run as a child of the test binary (with
// otherKinEnv set to the workspace root and KIN_SANDBOX_OTHER_HOME to its kin home) it is a second kin on the same
// workspace and kin home, holding one command's placeholders. It says
// "held" once they stand (its command started), waits for a line on its input, then ends the
// command, releases and settles as kin does, and says "released".
func TestOtherKinHelper(t *testing.T) {
	env := os.Getenv(otherKinEnv)
	if env == "" {
		t.Skip("only run as the other kin of TestAnotherKinsReleaseLeavesOurCommandProtected")
	}
	root, home := env, os.Getenv("KIN_SANDBOX_OTHER_HOME")
	if n, _ := strconv.Atoi(os.Getenv("KIN_SANDBOX_OTHER_ROUNDS")); n > 0 {
		// a kin running commands one after another, each trying to
		// create every protected path, its releases in the background
		sb := New(Config{Hidden: []string{home}, Cache: filepath.Join(home, "cache"), RunDir: filepath.Join(home, "run")})
		for i := range n {
			cmd, end := workspaceCommand(t, sb, root, home, fmt.Sprintf("sleep 0.0%d; %s", i%5, plant()))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("round %d: %v\n%s", i, err, out)
			}
			end()
		}
		Settle()
		fmt.Println("done")
		return
	}
	if os.Getenv("KIN_SANDBOX_OTHER_SWEEP") == "1" {
		// a kin starting: it sweeps what killed kins left
		New(Config{Hidden: []string{home}, RunDir: filepath.Join(home, "run")})
		fmt.Println("swept")
		return
	}
	// .github writable to its commands (sandboxWritable), not to ours: it
	// records .github/workflows under another key (another marker folder)
	sb := New(Config{Hidden: []string{home}, Cache: filepath.Join(home, "cache"), RunDir: filepath.Join(home, "run"),
		Writable: []string{filepath.Join(root, ".github")}})
	if !sb.Status().Confined {
		t.Fatal("the other kin cannot confine commands")
	}
	cmd, end := workspaceCommand(t, sb, root, home, "touch other-runs; sleep 60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, filepath.Join(root, "other-runs")) // every mount point made
	os.Remove(filepath.Join(root, "other-runs"))
	fmt.Println("held")
	bufio.NewReader(os.Stdin).ReadString('\n')
	cmd.Process.Kill()
	cmd.Wait()
	end()
	Settle()
	fmt.Println("released")
}

// waitFor waits until p stands.
func waitFor(t *testing.T, p string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Lstat(p); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never stood", p)
		}
	}
}

// Two kin processes on one repository (two editor windows): the other
// kin's command holds placeholders; ours is set up while they stand (its
// walk sees them as existing, empty folders, bound read-only); then the
// other kin's command ends and it releases. The placeholders must stay
// while our command runs (removing a mount point on the host takes the
// mount away inside our sandbox too, and our command could then create
// the protected paths), and go once it ended; the person's own empty
// folder is never removed.
func TestAnotherKinsReleaseLeavesOurCommandProtected(t *testing.T) {
	root, home, sb := confinedWorkspace(t)
	own := filepath.Join(root, ".github") // the person's, empty
	if err := os.Mkdir(own, 0o755); err != nil {
		t.Fatal(err)
	}
	other := startChild(t, "TestOtherKinHelper", otherKinEnv+"="+root, "KIN_SANDBOX_OTHER_HOME="+home)
	other.await(t, "held")

	// our walk sees the other kin's placeholders standing
	ours, endOurs := workspaceCommand(t, sb, root, home,
		"touch ours-runs; while [ ! -e go ]; do sleep 0.02; done; "+plant())
	var output strings.Builder
	ours.Stdout, ours.Stderr = &output, &output
	if err := ours.Start(); err != nil {
		t.Fatal(err)
	}
	defer ours.Process.Kill()                    // should the test end early
	waitFor(t, filepath.Join(root, "ours-runs")) // bound as it stood
	os.Remove(filepath.Join(root, "ours-runs"))
	io.WriteString(other.tell, "release\n")
	other.await(t, "released")
	go io.Copy(io.Discard, other.out)
	if err := other.cmd.Wait(); err != nil {
		t.Fatalf("the other kin: %v", err)
	}
	for _, p := range []string{"AGENTS.md", ".mcp.json", ".git/info", ".github/workflows"} {
		if _, err := os.Lstat(filepath.Join(root, p)); err != nil {
			t.Errorf("the other kin's release removed %s while our command held it: %v", p, err)
		}
	}
	endPlanting(t, root, ours, endOurs, &output)
	var left []string
	for _, p := range leftovers(root) {
		if p != ".github" {
			left = append(left, p)
		}
	}
	if len(left) > 0 {
		t.Errorf("left after both kins' commands ended: %v", left)
	}
	if entries, err := os.ReadDir(own); err != nil || len(entries) > 0 {
		t.Errorf("the person's empty .github: %v, holding %v", err, entries)
	}
	markers, _ := filepath.Glob(filepath.Join(home, "run", "placeholders", "*", "*"))
	if len(markers) > 0 {
		t.Errorf("markers left: %v", markers)
	}
}

// A killed kin's placeholder (its marker left behind) that our command
// binds as it stands is held by our command: a kin starting meanwhile
// (which sweeps what killed kins left) leaves it, and our command removes
// it once it ended; an empty folder of the person's that no marker records
// stays.
func TestAKilledKinsPlaceholderOutlivesASweepWhileBound(t *testing.T) {
	root, home, sb := confinedWorkspace(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true")
	}
	left := filepath.Join(root, ".mcp.json")
	if err := os.Mkdir(left, 0o755); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(root, ".vscode") // the person's, empty
	if err := os.Mkdir(own, 0o755); err != nil {
		t.Fatal(err)
	}
	// recorded under a key of its own (another root)
	dir := markerDir(filepath.Join(home, "run"), filepath.Join(root, "elsewhere"))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(dead.Process.Pid)), []byte("p\t"+left+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	ours, endOurs := workspaceCommand(t, sb, root, home, "touch ours-runs; while [ ! -e go ]; do sleep 0.02; done; "+plant())
	if err := ours.Start(); err != nil {
		t.Fatal(err)
	}
	defer ours.Process.Kill() // should the test end early
	waitFor(t, filepath.Join(root, "ours-runs"))
	os.Remove(filepath.Join(root, "ours-runs"))
	starting := exec.Command(os.Args[0], "-test.run=^TestOtherKinHelper$")
	starting.Env = append(os.Environ(), otherKinEnv+"="+root, "KIN_SANDBOX_OTHER_HOME="+home, "KIN_SANDBOX_OTHER_SWEEP=1")
	if out, err := starting.CombinedOutput(); err != nil || !strings.Contains(string(out), "swept") {
		t.Fatalf("the kin starting: %v\n%s", err, out)
	}
	if _, err := os.Lstat(left); err != nil {
		t.Errorf("a kin's sweep removed what our command binds: %v", err)
	}
	endPlanting(t, root, ours, endOurs, nil)
	if _, err := os.Lstat(left); !os.IsNotExist(err) {
		t.Errorf("the killed kin's placeholder stayed after our command, its last holder: %v", err)
	}
	if entries, err := os.ReadDir(own); err != nil || len(entries) > 0 {
		t.Errorf("the person's empty .vscode: %v, holding %v", err, entries)
	}
	if markers, _ := filepath.Glob(filepath.Join(home, "run", "placeholders", "*", "*")); len(markers) > 0 {
		t.Errorf("markers left: %v", markers)
	}
}

// Two kins running commands at once on one repository, each command trying
// to create every protected path while the other kin's commands start and
// end (their walks seeing each other's placeholders standing, their
// releases racing the other's holds): none succeeds, and nothing stays.
func TestTwoKinsCommandsAtOnceKeepTheirPlaceholders(t *testing.T) {
	root, home, sb := confinedWorkspace(t)
	const rounds = 8
	other := exec.Command(os.Args[0], "-test.run=^TestOtherKinHelper$")
	other.Env = append(os.Environ(), otherKinEnv+"="+root, "KIN_SANDBOX_OTHER_HOME="+home, "KIN_SANDBOX_OTHER_ROUNDS="+strconv.Itoa(rounds))
	var otherOut strings.Builder
	other.Stdout, other.Stderr = &otherOut, &otherOut
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer other.Process.Kill()
	for i := range rounds {
		cmd, end := workspaceCommand(t, sb, root, home, fmt.Sprintf("sleep 0.0%d; %s", (i+2)%5, plant()))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("round %d: %v\n%s", i, err, out)
		}
		end()
	}
	if err := other.Wait(); err != nil || !strings.Contains(otherOut.String(), "done") {
		t.Fatalf("the other kin: %v\n%s", err, otherOut.String())
	}
	Settle()
	for _, p := range planted {
		if b, err := os.ReadFile(filepath.Join(root, p)); err == nil {
			t.Errorf("a command created %s: %q", p, b)
		}
	}
	if left := leftovers(root); len(left) > 0 {
		t.Errorf("on disk after both kins' commands ended: %v", left)
	}
	if markers, _ := filepath.Glob(filepath.Join(home, "run", "placeholders", "*", "*")); len(markers) > 0 {
		t.Errorf("markers left: %v", markers)
	}
}

// endPlanting lets our command (waiting for a "go" file) try to plant every
// protected path, ends it, settles, and checks that none was created.
func endPlanting(t *testing.T, root string, ours *exec.Cmd, endOurs func(), output *strings.Builder) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ours.Wait(); err != nil {
		said := ""
		if output != nil {
			said = output.String()
		}
		t.Errorf("our command: %v\n%s", err, said)
	}
	endOurs()
	Settle()
	os.Remove(filepath.Join(root, "go"))
	for _, p := range planted {
		if b, err := os.ReadFile(filepath.Join(root, p)); err == nil {
			t.Errorf("our command created %s: %q", p, b)
		}
	}
}
