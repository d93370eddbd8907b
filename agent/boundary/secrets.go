package boundary

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// Secrets are the paths no tool reads without the person's approval, and
// no command sees: $KIN_HOME (settings with the model key, grants,
// sign-ins, sessions), the person's credential folders and files in their
// home folder, and, anywhere, files whose names say they hold secrets
// (.env, keys, credentials files) or whose content starts like a private
// key.
type Secrets struct {
	kinHome string // real; "" when unknown
	home    string // the person's home folder, real; "" when unknown
}

// DefaultKinHome is $KIN_HOME, else ~/.kin ("" when neither is known).
func DefaultKinHome() string {
	if h := os.Getenv("KIN_HOME"); h != "" {
		return h
	}
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return filepath.Join(h, ".kin")
	}
	return ""
}

// NewSecrets describes the secrets around kinHome ("" for DefaultKinHome)
// and the person's home folder.
func NewSecrets(kinHome string) *Secrets {
	if kinHome == "" {
		kinHome = DefaultKinHome()
	}
	s := &Secrets{}
	if kinHome != "" {
		if abs, err := filepath.Abs(kinHome); err == nil {
			s.kinHome = RealPath(abs)
		}
	}
	if h, err := os.UserHomeDir(); err == nil && h != "" && h != "/" {
		s.home = RealPath(h)
	}
	return s
}

// KinHome is $KIN_HOME, real.
func (s *Secrets) KinHome() string { return s.kinHome }

// homeCredentials are the credential folders and files of a home folder
// (relative to it, slash-separated): hidden from commands and never read
// by a tool unasked.
var homeCredentials = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".config/gcloud",
	".config/gh", ".config/hub", ".config/git/credentials", ".git-credentials", ".netrc", "_netrc",
	".npmrc", ".pypirc", ".pgpass", ".cargo/credentials", ".cargo/credentials.toml",
	".local/share/keyrings", ".password-store", ".terraform.d", ".vault-token",
	".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
	"Library/Keychains", "Library/Cookies", "Library/Application Support/Google/Chrome", "Library/Application Support/Firefox",
}

// secretDirs are folder names that hold credentials wherever they are (a
// workspace that keeps a copy of someone's ~/.aws, say).
var secretDirs = []string{".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".config/gcloud", ".config/gh", ".password-store"}

// secretNames are file-name patterns (path.Match, case-insensitive) of
// files that hold secrets wherever they are.
var secretNames = []string{
	".env", ".env.*", ".envrc",
	"*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.ppk",
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
	".npmrc", ".yarnrc.yml", ".pypirc", ".netrc", "_netrc", ".git-credentials", ".pgpass", ".htpasswd",
	"credentials", "credentials.json", "*.credentials", "secrets.json", "secrets.yaml", "secrets.yml",
	".vault-token", "kubeconfig",
}

// notSecret are names the patterns above catch that hold no secret by
// convention: examples of an .env, public keys.
var notSecret = []string{".env.example", ".env.sample", ".env.template", ".env.dist", ".env.defaults", "*.pub"}

// secretFiles are paths (slash-separated, below any folder) that hold
// secrets although their names do not say so: a repository's config keeps
// clone URLs, with their tokens.
var secretFiles = []string{".git/config"}

// Reason says why real (an absolute path, symlinks resolved) is a secret,
// or "". rel is real relative to the workspace folder holding it ("" when
// outside every folder): below a folder only the part below it counts for
// names, so a workspace that lives under, say, ~/.config stays usable.
func (s *Secrets) Reason(real, rel string) string {
	if s.kinHome != "" && Within(s.kinHome, real) {
		return "it is in kin's home ($KIN_HOME: settings with the model key, grants, sign-ins, sessions)"
	}
	return s.reasonBelow(real, rel)
}

// reasonBelow is Reason without the kin's-home rule: the person's
// credentials and secret names (below rel's folder).
func (s *Secrets) reasonBelow(real, rel string) string {
	if why := s.credential(real); why != "" {
		return why
	}
	names := rel
	if names == "" {
		names = filepath.ToSlash(real)
	}
	if pat := SecretName(names); pat != "" {
		return "it looks like a secret (it matches " + pat + ")"
	}
	return ""
}

// credential says why real is one of the person's credentials in their
// home folder ("" when it is not).
func (s *Secrets) credential(real string) string {
	if s.home == "" || !Within(s.home, real) {
		return ""
	}
	r, _ := filepath.Rel(s.home, real)
	r = filepath.ToSlash(r)
	for _, c := range homeCredentials {
		if r == c || strings.HasPrefix(r, c+"/") {
			return "it is one of your credentials (~/" + c + ")"
		}
	}
	return ""
}

// SecretName returns the pattern a slash-separated path matches (a secret
// file name, a credentials folder along it, a secret file such as
// .git/config), or "".
func SecretName(p string) string { return secretNameElems(elemsOf(p)) }

// secretNameElems is SecretName of a path taken apart (elemsOf).
func secretNameElems(elems []string) string {
	if len(elems) == 0 {
		return ""
	}
	for i, d := range secretDirs {
		if hasElems(elems, secretDirElems[i], false) {
			return d + "/"
		}
	}
	for i, f := range secretFiles {
		if hasElems(elems, secretFileElems[i], true) {
			return f
		}
	}
	base := elems[len(elems)-1]
	for _, n := range notSecretGlobs {
		if n.match(base) {
			return ""
		}
	}
	for _, n := range secretNameGlobs {
		if n.match(base) {
			return n.pattern
		}
	}
	return ""
}

// The lists above, taken apart once: SecretName runs for every entry of
// the workspace walk that comes before every confined command, where
// path.Match over every pattern was half of the walk's time.
var (
	secretDirElems  = splitAll(secretDirs)
	secretFileElems = splitAll(secretFiles)
	secretNameGlobs = globsOf(secretNames)
	notSecretGlobs  = globsOf(notSecret)
)

func splitAll(paths []string) [][]string {
	out := make([][]string, len(paths))
	for i, p := range paths {
		out[i] = strings.Split(p, "/")
	}
	return out
}

// glob is a pattern of the lists: a name, "prefix*" or "*suffix" (the only
// forms they use; globsOf refuses any other, so a new pattern cannot be
// matched wrongly without failing at start).
type glob struct {
	pattern, fixed string
	prefix, suffix bool // fixed is the part before or after the *
}

func globsOf(patterns []string) []glob {
	out := make([]glob, len(patterns))
	for i, p := range patterns {
		g := glob{pattern: p, fixed: p}
		switch n := strings.Count(p, "*"); {
		case strings.ContainsAny(p, "?[\\") || n > 1:
			panic("boundary: pattern " + p + " is not a name, prefix* or *suffix")
		case n == 1 && strings.HasSuffix(p, "*"):
			g.prefix, g.fixed = true, strings.TrimSuffix(p, "*")
		case n == 1 && strings.HasPrefix(p, "*"):
			g.suffix, g.fixed = true, strings.TrimPrefix(p, "*")
		case n == 1:
			panic("boundary: pattern " + p + " is not a name, prefix* or *suffix")
		}
		out[i] = g
	}
	return out
}

// match is path.Match(g.pattern, name) for a name without a slash.
func (g glob) match(name string) bool {
	switch {
	case g.prefix:
		return strings.HasPrefix(name, g.fixed)
	case g.suffix:
		return strings.HasSuffix(name, g.fixed)
	}
	return name == g.fixed
}

// hasElems reports whether want occurs in elems as consecutive elements
// (atEnd: as the last ones).
func hasElems(elems, want []string, atEnd bool) bool {
	for i := 0; i+len(want) <= len(elems); i++ {
		if atEnd && i+len(want) != len(elems) {
			continue
		}
		match := true
		for j := range want {
			if elems[i+j] != want[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// SecretContent says why content is a secret: a private key ("" when it
// is not). A key is found on any line of content, not only its first:
// OpenSSL writes "Bag Attributes" above a key it takes out of a PKCS#12
// file, and a server's combined PEM holds its certificates first, then
// the key. A line is read after its leading blanks and digits, so a
// numbered page (read_file's "    12\t...") is read as its file.
func SecretContent(content []byte) string {
	// Looked up by marker, not line by line: search runs this over every
	// file it reads.
	if keyMarker(content, "-----BEGIN ", "PRIVATE KEY") || keyMarker(content, "PuTTY-User-Key-File", "") {
		return "its content is a private key"
	}
	return ""
}

// keyMarker says whether a line of content begins with marker (after
// blanks and digits) and holds also after it.
func keyMarker(content []byte, marker, also string) bool {
	for off := 0; ; {
		i := bytes.Index(content[off:], []byte(marker))
		if i < 0 {
			return false
		}
		at := off + i
		off = at + len(marker)
		start := bytes.LastIndexByte(content[:at], '\n') + 1
		if len(bytes.TrimLeft(content[start:at], " \t0123456789")) != 0 {
			continue
		}
		line := content[off:]
		if end := bytes.IndexByte(line, '\n'); end >= 0 {
			line = line[:end]
		}
		if bytes.Contains(line, []byte(also)) {
			return true
		}
	}
}

// Hidden lists what a confined command may not read: $KIN_HOME and the
// person's credential folders and files that exist.
func (s *Secrets) Hidden() []string {
	var out []string
	if s.kinHome != "" {
		out = append(out, s.kinHome)
	}
	if s.home == "" {
		return out
	}
	for _, c := range homeCredentials {
		p := filepath.Join(s.home, filepath.FromSlash(c))
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}
