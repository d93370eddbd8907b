package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kin-dev/kin/agent/lockedfile"
)

// SecretsFileName is the file, inside KIN_HOME, that keeps the secret
// values of project-scope servers out of <workdir>/.kin/mcp.json (a file
// people commit).
const SecretsFileName = "mcp_secrets.json"

// SecretsPath is <kinHome>/mcp_secrets.json.
func SecretsPath(kinHome string) string { return filepath.Join(kinHome, SecretsFileName) }

// secretsFile is mcp_secrets.json: per project folder (absolute, symlinks
// resolved) and server name, the values of the ${VAR} references Store
// wrote into that project's .kin/mcp.json. A value answers only its own
// project and server: another project's file naming the same variable, or
// another server of this project, never gets it.
type secretsFile struct {
	Version  int                                     `json:"version"`
	Projects map[string]map[string]map[string]string `json:"projects"`
}

func parseSecrets(path string, data []byte) (*secretsFile, error) {
	f := &secretsFile{}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, f); err != nil {
			return nil, fmt.Errorf("%s is malformed; fix or delete it (project servers then ask for their secrets again)", path)
		}
	}
	f.Version = 1
	if f.Projects == nil {
		f.Projects = map[string]map[string]map[string]string{}
	}
	return f, nil
}

// projectKey names a project folder in the secrets file.
func projectKey(workdir string) string {
	abs, err := filepath.Abs(workdir)
	if err != nil {
		return filepath.Clean(workdir)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// projectSecrets returns the stored values of a project's servers (nil
// when there are none). A file that cannot be read resolves nothing: the
// references then fall back to the environment, and the load warns about
// what is not set.
func projectSecrets(kinHome, workdir string) map[string]map[string]string {
	path := SecretsPath(kinHome)
	// Bounded and non-blocking, as the configuration files are read: a
	// FIFO here would otherwise hold up every load, the global scope's
	// servers included.
	data, err := readYours(path, maxDoc)
	if err != nil {
		return nil
	}
	f, err := parseSecrets(path, data)
	if err != nil {
		return nil
	}
	return f.Projects[projectKey(workdir)]
}

// withSecrets is lookup with a server's stored values in front of it.
func withSecrets(stored map[string]string, lookup LookupEnv) LookupEnv {
	if len(stored) == 0 {
		return lookup
	}
	return func(name string) (string, bool) {
		if v, ok := stored[name]; ok {
			return v, true
		}
		return lookup(name)
	}
}

// updateSecrets replaces a project server's stored values under the file
// lock: keep says which stored variables stay (nil: none), then set is
// added. An empty result removes the server.
func (st *Store) updateSecrets(server string, keep func(string) bool, set map[string]string) error {
	if st.kinHome == "" {
		if len(set) == 0 {
			return nil
		}
		return fmt.Errorf("%w: no KIN_HOME to keep this server's secret values out of the project file; write them as ${VAR} references", ErrScope)
	}
	path := SecretsPath(st.kinHome)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) && len(set) == 0 {
		return nil // nothing stored, nothing to store
	}
	if err == nil && !fi.Mode().IsRegular() {
		// lockedfile.Update would wait on a FIFO for good.
		return fmt.Errorf("%s is not a regular file (%v); fix or delete it", path, fi.Mode().Type())
	}
	project := projectKey(st.workdir)
	return lockedfile.Update(path, func(data []byte, _ bool) ([]byte, error) {
		f, err := parseSecrets(path, data)
		if err != nil {
			return nil, err
		}
		servers := f.Projects[project]
		vars := map[string]string{}
		for k, v := range servers[server] {
			if keep != nil && keep(k) {
				vars[k] = v
			}
		}
		for k, v := range set {
			vars[k] = v
		}
		if servers == nil {
			servers = map[string]map[string]string{}
		}
		if len(vars) == 0 {
			delete(servers, server)
		} else {
			servers[server] = vars
		}
		if len(servers) == 0 {
			delete(f.Projects, project)
		} else {
			f.Projects[project] = servers
		}
		out, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			return nil, err
		}
		return append(out, '\n'), nil
	})
}

// moveSecrets takes the secret values out of a project entry: every env
// and header value and every URL password and query value written as
// literal text (one without a ${...} reference) becomes a ${VAR} reference,
// and the value is returned in vars for the secrets file. An
// Authorization header keeps its scheme word ("Bearer ${API_AUTHORIZATION}").
// moved names each field, "env.TOKEN as ${TOKEN}". These are exactly the
// values kin masks wherever it shows a server.
func moveSecrets(server string, raw json.RawMessage) (out json.RawMessage, vars map[string]string, moved []string, err error) {
	members, err := parseObject(raw)
	if err != nil {
		return nil, nil, nil, errors.New("entry is not a JSON object")
	}
	vars = map[string]string{}
	used := map[string]bool{}
	name := func(parts ...string) string {
		n := varName(parts...)
		for i := 2; used[n]; i++ {
			n = fmt.Sprintf("%s_%d", varName(parts...), i)
		}
		used[n] = true
		return n
	}
	for i, m := range members {
		switch m.key {
		case "env", "headers":
			fields, err := parseObject(m.raw)
			if err != nil {
				continue // not an object: checkRaw says so
			}
			for j, f := range fields {
				var v string
				if json.Unmarshal(f.raw, &v) != nil || v == "" || hasRefs(v) {
					continue
				}
				prefix, secret := "", v
				var ref string
				if m.key == "env" {
					ref = f.key
					if !validVarName(ref) || used[ref] {
						ref = name(server, f.key)
					}
					used[ref] = true
				} else {
					if sc := authScheme().FindStringSubmatch(v); sc != nil && isAuthHeader(f.key) {
						prefix = sc[1] + " "
						secret = strings.TrimSpace(v[len(sc[1]):])
					}
					ref = name(server, f.key)
				}
				vars[ref] = secret
				fields[j].raw = jsonString(prefix + "${" + ref + "}")
				moved = append(moved, fmt.Sprintf("%s.%s as ${%s}", m.key, f.key, ref))
			}
			members[i].raw = joinObject(fields)
		case "url":
			var u string
			if json.Unmarshal(m.raw, &u) != nil || hasRefs(u) {
				continue
			}
			nu, uv, um := moveURLSecrets(u, func(part string) string { return name(server, "URL", part) })
			if len(uv) == 0 {
				continue
			}
			for k, v := range uv {
				vars[k] = v
			}
			moved = append(moved, um...)
			members[i].raw = jsonString(nu)
		}
	}
	if len(vars) == 0 {
		return raw, nil, nil, nil
	}
	return joinObject(members), vars, moved, nil
}

// moveURLSecrets replaces a URL's password and query values, as written,
// with references named by ref.
func moveURLSecrets(u string, ref func(part string) string) (string, map[string]string, []string) {
	vars := map[string]string{}
	var moved []string
	frag := ""
	if i := strings.IndexByte(u, '#'); i >= 0 {
		u, frag = u[:i], u[i:]
	}
	query := ""
	if i := strings.IndexByte(u, '?'); i >= 0 {
		u, query = u[:i], u[i+1:]
	}
	if i := strings.Index(u, "://"); i >= 0 {
		rest := u[i+3:]
		authEnd := len(rest)
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			authEnd = j
		}
		auth := rest[:authEnd]
		if at := strings.LastIndexByte(auth, '@'); at >= 0 {
			if user, pass, ok := strings.Cut(auth[:at], ":"); ok && pass != "" {
				r := ref("PASSWORD")
				vars[r] = pass
				moved = append(moved, "url password as ${"+r+"}")
				auth = user + ":${" + r + "}" + auth[at:]
			}
		}
		u = u[:i+3] + auth + rest[authEnd:]
	}
	if query != "" {
		parts := strings.Split(query, "&")
		for i, p := range parts {
			k, v, ok := strings.Cut(p, "=")
			if !ok || v == "" {
				continue
			}
			r := ref(k)
			vars[r] = v
			moved = append(moved, fmt.Sprintf("url query %s as ${%s}", k, r))
			parts[i] = k + "=${" + r + "}"
		}
		u += "?" + strings.Join(parts, "&")
	}
	return u + frag, vars, moved
}

// referencedVars lists the variables an entry's launch fields reference.
func referencedVars(raw json.RawMessage) map[string]bool {
	out := map[string]bool{}
	e, err := decodeEntry(raw)
	if err != nil {
		return out
	}
	texts := append([]string{e.command, e.url}, e.args...)
	for _, m := range []map[string]string{e.env, e.headers} {
		for _, v := range m {
			texts = append(texts, v)
		}
	}
	if e.oauth != nil {
		texts = append(texts, e.oauth.clientID)
	}
	for _, s := range texts {
		segs, _ := parseRefs(s)
		for _, seg := range segs {
			if seg.name != "" {
				out[seg.name] = true
			}
		}
	}
	return out
}

// varName builds an environment-variable-style name from parts:
// upper-cased, every other character '_', never starting with a digit.
func varName(parts ...string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('_')
		}
		for _, r := range strings.ToUpper(p) {
			if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
				b.WriteRune(r)
			} else {
				b.WriteByte('_')
			}
		}
	}
	n := b.String()
	if n == "" || n[0] >= '0' && n[0] <= '9' {
		n = "KIN_" + n
	}
	return n
}

func isAuthHeader(name string) bool {
	return strings.EqualFold(name, "Authorization") || strings.EqualFold(name, "Proxy-Authorization")
}

func jsonString(s string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSpace(b.Bytes())
}
