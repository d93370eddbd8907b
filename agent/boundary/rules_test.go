package boundary_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/boundary"
)

// The one list of files that make things run later, as edits see it: at
// any depth, case-insensitively; nothing else.
func TestRunsLater(t *testing.T) {
	for _, p := range []string{
		".git/hooks/pre-commit", ".git/config", ".git", "sub/.git/config", ".kin/mcp.json", ".mcp.json",
		".claude/settings.json", ".agents/skills/x/SKILL.md", ".vscode/tasks.json", ".VSCode/settings.json", ".idea/workspace.xml",
		".github/workflows/ci.yml", ".husky/pre-commit", ".gitmodules", ".envrc", "AGENTS.md", "pkg/CLAUDE.md",
		"home/.ssh/authorized_keys", ".pre-commit-config.yaml",
	} {
		if boundary.RunsLater(p) == "" {
			t.Errorf("%s: not a file that runs things later", p)
		}
	}
	for _, p := range []string{"main.go", ".github/ISSUE_TEMPLATE.md", "docs/agents.md.txt", ".gitignore", "vscode/x", "src/.github/x.yml", "agents/x"} {
		if why := boundary.RunsLater(p); why != "" {
			t.Errorf("%s: %s", p, why)
		}
	}
}

// Secrets: names anywhere, kin's home and the person's credentials by
// place, private keys by content.
func TestSecrets(t *testing.T) {
	home, _ := filepath.EvalSymlinks(t.TempDir())
	t.Setenv("HOME", home)
	kinHome := filepath.Join(home, ".kin")
	s := boundary.NewSecrets(kinHome)
	for p, want := range map[string]string{
		filepath.Join(kinHome, "settings.json"):           "kin's home",
		filepath.Join(kinHome, "sessions", "s_1.jsonl"):   "kin's home",
		filepath.Join(home, ".ssh", "id_rsa"):             "~/.ssh",
		filepath.Join(home, ".aws", "credentials"):        "~/.aws",
		filepath.Join(home, ".config", "gh", "hosts.yml"): "~/.config/gh",
		filepath.Join(home, ".netrc"):                     "~/.netrc",
		filepath.Join(home, ".docker", "config.json"):     "~/.docker",
		filepath.Join(home, ".kube", "config"):            "~/.kube",
		filepath.Join(home, ".gnupg", "pubring.kbx"):      "~/.gnupg",
	} {
		if why := s.Reason(p, ""); !strings.Contains(why, want) {
			t.Errorf("%s: %q, want %q", p, why, want)
		}
	}
	for rel, want := range map[string]string{
		".env": ".env", "config/.ENV.local": ".env.*", "certs/server.pem": "*.pem", "deploy/id_ed25519": "id_ed25519*",
		".git/config": ".git/config", "sub/.git/config": ".git/config", "backup/.aws/credentials": ".aws/", ".npmrc": ".npmrc",
	} {
		if got := boundary.SecretName(rel); got != want {
			t.Errorf("%s: %q, want %q", rel, got, want)
		}
	}
	for _, rel := range []string{"main.go", ".env.example", "id_ed25519.pub", "environment.go", ".git/HEAD", "docs/credentials.md"} {
		if got := boundary.SecretName(rel); got != "" {
			t.Errorf("%s: %q", rel, got)
		}
	}
	// a workspace below ~/.config is usable: only the part below the root
	// counts for names
	if why := s.Reason(filepath.Join(home, ".config", "myproj", "main.go"), "main.go"); why != "" {
		t.Errorf("a project below ~/.config: %s", why)
	}
	if boundary.SecretContent([]byte("\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn...")) == "" ||
		boundary.SecretContent([]byte("-----BEGIN CERTIFICATE-----\n")) != "" {
		t.Error("private keys by content")
	}
	// a key below other lines: OpenSSL's "Bag Attributes" (openssl pkcs12
	// -nodes), a server's combined PEM (certificates, then the key), a
	// numbered page of read_file; a source line that names the marker is
	// not a key
	for _, key := range []string{
		"Bag Attributes\n    localKeyID: 01 02\nKey Attributes: <No Attributes>\n-----BEGIN PRIVATE KEY-----\nMIIE...",
		"-----BEGIN CERTIFICATE-----\nMIID...\n-----END CERTIFICATE-----\n-----BEGIN RSA PRIVATE KEY-----\nMIIE...",
		"     1\tBag Attributes\n     2\t-----BEGIN ENCRYPTED PRIVATE KEY-----\n",
		"notes\r\nPuTTY-User-Key-File-3: ssh-ed25519\r\n",
	} {
		if boundary.SecretContent([]byte(key)) == "" {
			t.Errorf("a private key not found in %q", key)
		}
	}
	if why := boundary.SecretContent([]byte("const header = \"-----BEGIN RSA PRIVATE KEY-----\"\n")); why != "" {
		t.Errorf("a source line naming the marker: %s", why)
	}
	// what a command may not read: kin's home and the credentials that exist
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if h := s.Hidden(); !slices.Contains(h, kinHome) || !slices.Contains(h, filepath.Join(home, ".ssh")) || slices.Contains(h, filepath.Join(home, ".aws")) {
		t.Errorf("hidden %v", h)
	}
}

// A session in the home folder or the file system's root is told so.
func TestWorkspaceNotice(t *testing.T) {
	home, _ := filepath.EvalSymlinks(t.TempDir())
	t.Setenv("HOME", home)
	for root, want := range map[string]string{home: "your home folder", "/": "the file system's root", t.TempDir(): ""} {
		ws, err := boundary.NewWorkspace([]string{root}, filepath.Join(home, ".kin"))
		if err != nil {
			t.Fatal(err)
		}
		if got := ws.Notice(); (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: %q", root, got)
		}
	}
}

// Commands and MCP servers never get kin's model keys: OPENAI_API_KEY and
// every apiKeyEnv of settings.json.
func TestModelKeysAreStripped(t *testing.T) {
	kinHome := t.TempDir()
	write(t, filepath.Join(kinHome, "settings.json"), `{"models":[{"id":"a","contextWindow":1000,"apiKeyEnv":"LOCAL_KEY"},{"id":"b","contextWindow":1000}]}`)
	env := boundary.CommandEnv([]string{"PATH=/bin", "OPENAI_API_KEY=sk-1", "LOCAL_KEY=lk-2", "LOCAL_KEYS=ok", "HOME=/h"}, kinHome)
	if strings.Join(env, " ") != "PATH=/bin LOCAL_KEYS=ok HOME=/h" {
		t.Fatalf("env %q", env)
	}
	lookup := boundary.WithoutModelKeys(func(k string) (string, bool) { return "v-" + k, true }, kinHome)
	if _, ok := lookup("LOCAL_KEY"); ok {
		t.Error("a model key was looked up")
	}
	if v, ok := lookup("TOKEN"); !ok || v != "v-TOKEN" {
		t.Error("another variable was not")
	}
}

// Credentials are masked in every URL kin shows; an anchor is no secret.
func TestMaskURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pw@api.example.com/v1":          "https://api.example.com/v1",
		"https://h/v1?api-key=sk-1&x=2":               "https://h/v1?api-key=●●●●&x=●●●●",
		"https://platform.openai.com/docs#tool-calls": "https://platform.openai.com/docs#tool-calls",
		"https://h/cb#access_token=abc&state=1":       "https://h/cb#access_token=●●●●&state=●●●●",
		"http://127.0.0.1:8080/v1":                    "http://127.0.0.1:8080/v1",
		"not a url but user@host":                     boundary.Mask,
		"https://u:p@h/p?k=v#frag":                    "https://h/p?k=●●●●#frag",
	} {
		if got := boundary.MaskURL(in); got != want {
			t.Errorf("MaskURL(%q) = %q, want %q", in, got, want)
		}
	}
	if got := boundary.MaskURLs("failed: https://u:pw@h/x?token=t and https://example.com/docs"); strings.Contains(got, "pw") || strings.Contains(got, "=t ") || !strings.Contains(got, "https://example.com/docs") {
		t.Errorf("MaskURLs: %q", got)
	}
}

func TestPackageRunner(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		args []string
		want bool
	}{
		{"npx", []string{"-y", "@modelcontextprotocol/server-filesystem"}, true},
		{"/usr/bin/uvx", []string{"mcp-server-git"}, true},
		{"bunx", nil, true},
		{"pnpm", []string{"dlx", "x"}, true},
		{"npm", []string{"exec", "x"}, true},
		{"npm", []string{"run", "x"}, false},
		{"node", []string{"server.js"}, false},
		{"uv", []string{"run", "srv"}, true},
		{"go", []string{"run", "example.com/srv@latest"}, true},
	} {
		if got := boundary.PackageRunner(c.cmd, c.args); got != c.want {
			t.Errorf("%s %v: %v", c.cmd, c.args, got)
		}
	}
}

// The files inside the project a launch runs are named with their digests.
func TestScripts(t *testing.T) {
	project, _ := tree(t)
	write(t, filepath.Join(project, "srv.sh"), "exec x")
	write(t, filepath.Join(project, "server.js"), "x")
	got := boundary.Scripts("/bin/sh", []string{"./srv.sh", "--config=server.js", "-v", "/etc/passwd"}, project, project)
	if len(got) != 2 || !strings.HasPrefix(got[filepath.Join(project, "srv.sh")], "sha256:") || got[filepath.Join(project, "server.js")] == "" {
		t.Fatalf("scripts %v", got)
	}
	if boundary.Scripts("/bin/sh", []string{"./srv.sh"}, project, "") != nil {
		t.Error("no project, no scripts")
	}
}

// A folder deleted and made again at the same path is another folder.
func TestFolderID(t *testing.T) {
	d := filepath.Join(t.TempDir(), "ws")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	a := boundary.FolderID(d)
	write(t, filepath.Join(d, "keep"), "x") // holds the inode while d is re-made
	other := d + "-old"
	if err := os.Rename(d, other); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if b := boundary.FolderID(d); a == b || len(a) != 16 {
		t.Fatalf("%s %s", a, b)
	}
}
