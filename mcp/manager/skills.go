package manager

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"reflect"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/skills"
	"github.com/kin-dev/kin/mcp/connect"
)

// This file is the client side of the MCP Skills extension
// (io.modelcontextprotocol/skills): a server that declares it serves Agent
// Skills as resources, listed with skills/list and skills/get, each with a
// manifest of its files and their SHA-256 digests. kin lists them when
// the server connects (the listing only: nothing of a skill is fetched
// before the model loads it), and reads a skill's files through
// resources/read, verified against the entry kin holds: size, digest and,
// for SKILL.md, the front matter. The approval (package agent, the
// ledger) binds to the whole manifest; a skill is addressed by the
// server's name in kin's configuration (the host's label) and its URI.

// SkillsExtension is the extension's identifier.
const SkillsExtension = "io.modelcontextprotocol/skills"

// Limits the extension fixes per skill, and how much of a listing kin
// reads.
const (
	maxSkillFiles   = 512
	maxSkillBytes   = 16 << 20
	maxSkillPages   = 20
	maxSkillsListed = 500
)

type skillsListParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type skillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

type skillEntry struct {
	URI         string          `json:"uri"`
	Frontmatter map[string]any  `json:"frontmatter"`
	Resources   json.RawMessage `json:"resources"`
}

type skillsListResult struct {
	mcp.ResultBase
	Skills     []skillEntry `json:"skills"`
	NextCursor string       `json:"nextCursor,omitempty"`
}

type skillsGetParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type skillsGetResult struct {
	mcp.ResultBase
	Skill skillEntry `json:"skill"`
}

// registerSkillMethods lets a client send skills/list and skills/get.
func registerSkillMethods(c *mcp.Client) error {
	if err := mcp.AddSendingCustomMethod[*skillsListParams, *skillsListResult](c, "skills/list"); err != nil {
		return err
	}
	return mcp.AddSendingCustomMethod[*skillsGetParams, *skillsGetResult](c, "skills/get")
}

// declaresSkills reports whether the server declared the extension (and
// resources, which it needs).
func declaresSkills(conn *connect.Conn) bool {
	r := conn.Session.InitializeResult()
	if r == nil || r.Capabilities == nil || r.Capabilities.Resources == nil {
		return false
	}
	_, ok := r.Capabilities.Extensions[SkillsExtension]
	return ok
}

// SkillFile is one file of a skill's manifest.
type SkillFile struct {
	URI, Digest string
	Size        int64
}

// Skill is one skill a connected server serves, as its entry says.
type Skill struct {
	// Server is the server's name in kin's configuration.
	Server string
	// Launch is the server's launch identity (the ledger binds approvals
	// to it and the URI).
	Launch       string
	URI          string
	Name         string
	Description  string
	AllowedTools []string
	Frontmatter  map[string]any
	// Files is the manifest; nil for a skill whose resources are
	// "dynamic".
	Files []SkillFile
	// Digest is "sha256:<hex>" over the manifest (every uri, digest and
	// size, sorted); "" for a dynamic skill.
	Digest string
}

// Root is the skill's root: its URI without /SKILL.md.
func (sk Skill) Root() string { return strings.TrimSuffix(sk.URI, "/"+skills.FileName) }

// Rel are the manifest's files relative to the root.
func (sk Skill) Rel() []string {
	var out []string
	for _, f := range sk.Files {
		out = append(out, strings.TrimPrefix(f.URI, sk.Root()+"/"))
	}
	return out
}

// vet turns an entry into a Skill, or says why it cannot be loaded.
func vetSkill(server, launch string, e skillEntry) (Skill, error) {
	sk := Skill{Server: server, Launch: launch, URI: e.URI, Frontmatter: e.Frontmatter}
	sk.Name, _ = e.Frontmatter["name"].(string)
	sk.Description, _ = e.Frontmatter["description"].(string)
	if !strings.HasSuffix(e.URI, "/"+skills.FileName) || sk.Name == "" || sk.Description == "" {
		return sk, fmt.Errorf("the entry %q is not a skill (a SKILL.md URI with a name and a description)", e.URI)
	}
	if path.Base(sk.Root()) != sk.Name {
		return sk, fmt.Errorf("the skill %q: its URI does not end in its name", e.URI)
	}
	// the name goes into the model's instructions and names a command: a
	// server's follows the rule a skill on disk does
	if !skills.ValidName(sk.Name) {
		return sk, fmt.Errorf("the skill %q: its name is not a skill name (lowercase letters, digits and hyphens, at most 64)", e.URI)
	}
	sk.AllowedTools = skills.AllowedTools(e.Frontmatter["allowed-tools"]) // as a SKILL.md on disk: a string or a list
	var dynamic string
	if json.Unmarshal(e.Resources, &dynamic) == nil {
		if dynamic != "dynamic" {
			return sk, fmt.Errorf("the skill %q: resources is %q", e.URI, dynamic)
		}
		return sk, nil // dynamic: listed, never loaded
	}
	var files []skillResource
	if err := json.Unmarshal(e.Resources, &files); err != nil || len(files) == 0 {
		return sk, fmt.Errorf("the skill %q has no manifest of its files", e.URI)
	}
	if len(files) > maxSkillFiles {
		return sk, fmt.Errorf("the skill %q has more than %d files", e.URI, maxSkillFiles)
	}
	var total int64
	hasMD := false
	for _, f := range files {
		if f.URI != sk.URI && !strings.HasPrefix(f.URI, sk.Root()+"/") || !strings.HasPrefix(f.Digest, "sha256:") || len(f.Digest) != 71 || f.Size < 0 {
			return sk, fmt.Errorf("the skill %q lists a file it cannot have: %q", e.URI, f.URI)
		}
		total += f.Size
		hasMD = hasMD || f.URI == sk.URI
		sk.Files = append(sk.Files, SkillFile{URI: f.URI, Digest: f.Digest, Size: f.Size})
	}
	if total > maxSkillBytes {
		return sk, fmt.Errorf("the skill %q is over %d MiB", e.URI, maxSkillBytes>>20)
	}
	if !hasMD {
		return sk, fmt.Errorf("the skill %q's manifest does not list its SKILL.md", e.URI)
	}
	sort.Slice(sk.Files, func(i, j int) bool { return sk.Files[i].URI < sk.Files[j].URI })
	h := sha256.New()
	for _, f := range sk.Files {
		fmt.Fprintf(h, "%s\x00%s\x00%d\n", f.URI, f.Digest, f.Size)
	}
	sk.Digest = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return sk, nil
}

// launchKey is what approvals of this server's skills bind to: the
// approved launch's key (Launch), else the server's identity.
func (s *server) launchKey() string {
	if k := s.Launch(); k != "" {
		return k
	}
	return s.id
}

// listSkills reads the server's listing (pages, bounded) and keeps what is
// a skill; what is not is reported once.
func (s *server) listSkills(ctx context.Context, conn *connect.Conn) {
	launch := s.launchKey()
	var out []Skill
	var bad []string
	p := &skillsListParams{}
	for page := 0; page < maxSkillPages && len(out) < maxSkillsListed; page++ {
		res, err := mcp.CallCustomMethod[*skillsListParams, *skillsListResult](ctx, conn.Session, "skills/list", p)
		if err != nil {
			s.m.host.Notice(LevelWarning, fmt.Sprintf("MCP server %s: skills/list failed: %s", s.disp.Name, s.redactErr(err)))
			break
		}
		for _, e := range res.Skills {
			sk, err := vetSkill(s.cfg.Name, launch, e)
			if err != nil {
				bad = append(bad, s.Redact(err.Error()))
				continue
			}
			out = append(out, sk)
		}
		if res.NextCursor == "" {
			break
		}
		p = &skillsListParams{Cursor: res.NextCursor}
	}
	if len(bad) > 0 {
		s.m.host.Notice(LevelWarning, fmt.Sprintf("MCP server %s: skills kin cannot load: %s", s.disp.Name, strings.Join(bad, "; ")))
	}
	s.mu.Lock()
	if s.conn == conn {
		s.skills = out
	}
	s.mu.Unlock()
	s.m.log.Debug("mcp skills", zap.String("server", s.cfg.Name), zap.Int("skills", len(out)))
}

// Skills lists the skills of every connected server that serves them.
func (m *Manager) Skills() []Skill {
	var out []Skill
	for _, s := range m.sorted() {
		s.mu.Lock()
		if s.conn != nil && s.state == StateConnected {
			out = append(out, s.skills...)
		}
		s.mu.Unlock()
	}
	return out
}

// ErrSkill wraps a skill kin could not load or verify.
var ErrSkill = errors.New("MCP skill")

func (m *Manager) connected(name string) (*server, *mcp.ClientSession, error) {
	m.mu.Lock()
	s := m.servers[name]
	m.mu.Unlock()
	if s == nil {
		return nil, nil, fmt.Errorf("%w: no server named %q", ErrSkill, name)
	}
	cs, ok := s.Session()
	if !ok {
		return nil, nil, fmt.Errorf("%w: the server %s is not connected", ErrSkill, name)
	}
	return s, cs, nil
}

// GetSkill asks the server for the skill's current entry (skills/get): a
// manifest that differs from the one the person approved is a changed
// skill. The held listing is updated.
func (m *Manager) GetSkill(ctx context.Context, server, uri string) (Skill, error) {
	s, cs, err := m.connected(server)
	if err != nil {
		return Skill{}, err
	}
	res, err := mcp.CallCustomMethod[*skillsGetParams, *skillsGetResult](ctx, cs, "skills/get", &skillsGetParams{URI: uri})
	if err != nil {
		return Skill{}, fmt.Errorf("%w: skills/get: %s", ErrSkill, s.redactErr(err))
	}
	if res.Skill.URI != uri {
		return Skill{}, fmt.Errorf("%w: skills/get answered for %q, not %q", ErrSkill, res.Skill.URI, uri)
	}
	sk, err := vetSkill(s.cfg.Name, s.launchKey(), res.Skill)
	if err != nil {
		return Skill{}, fmt.Errorf("%w: %s", ErrSkill, err.Error())
	}
	s.mu.Lock()
	for i := range s.skills {
		if s.skills[i].URI == uri {
			s.skills[i] = sk
		}
	}
	s.mu.Unlock()
	return sk, nil
}

// ReadSkill reads one file of the skill (rel: its path below the root;
// SKILL.md when ""), verified against the manifest held in sk: a file the
// manifest does not list, or whose size or digest differ, is refused.
// SKILL.md's front matter must equal the entry's; its body is returned.
func (m *Manager) ReadSkill(ctx context.Context, sk Skill, rel string) (string, error) {
	if sk.Digest == "" {
		return "", fmt.Errorf("%w: %s is generated by the server (\"dynamic\"): nothing can be verified, kin does not load it", ErrSkill, sk.URI)
	}
	uri := sk.URI
	if rel != "" && rel != skills.FileName {
		clean := path.Clean("/" + rel)[1:]
		if clean == "" || strings.HasPrefix(clean, "..") {
			return "", fmt.Errorf("%w: %q is not a file of the skill", ErrSkill, rel)
		}
		uri = sk.Root() + "/" + clean
	}
	var want *SkillFile
	for i := range sk.Files {
		if sk.Files[i].URI == uri {
			want = &sk.Files[i]
		}
	}
	if want == nil {
		return "", fmt.Errorf("%w: %s is not in the skill's manifest (an unlisted file is a change to the skill: ask for the skill again)", ErrSkill, uri)
	}
	s, cs, err := m.connected(sk.Server)
	if err != nil {
		return "", err
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", fmt.Errorf("%w: resources/read %s: %s", ErrSkill, uri, s.redactErr(err))
	}
	var data []byte
	found := false
	for _, c := range res.Contents {
		if c != nil && c.URI == uri {
			if c.Blob != nil {
				data = c.Blob
			} else {
				data = []byte(c.Text)
			}
			found = true
			break
		}
	}
	sum := sha256.Sum256(data)
	switch {
	case !found:
		return "", fmt.Errorf("%w: the server answered resources/read without %s", ErrSkill, uri)
	case int64(len(data)) != want.Size || "sha256:"+hex.EncodeToString(sum[:]) != want.Digest:
		return "", fmt.Errorf("%w: %s is not what the skill's manifest says (size or digest differ): kin does not use it", ErrSkill, uri)
	}
	if uri != sk.URI {
		return string(data), nil
	}
	fm, body, err := skills.Split(data)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrSkill, uri, err)
	}
	if !sameFrontmatter(fm.Fields, sk.Frontmatter) {
		return "", fmt.Errorf("%w: %s's front matter differs from the skill's entry: kin does not load it", ErrSkill, uri)
	}
	return body, nil
}

// sameFrontmatter compares two front matters as JSON values.
func sameFrontmatter(a, b map[string]any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return false
	}
	var va, vb any
	_ = json.Unmarshal(ja, &va)
	_ = json.Unmarshal(jb, &vb)
	return reflect.DeepEqual(va, vb) || bytes.Equal(ja, jb)
}
