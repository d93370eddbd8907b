package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Def is one vetted tool definition.
type Def struct {
	Server      string          // the server's configured name
	Name        string          // the tool's name on the server
	Exposed     string          // the name the model sees
	Description string          // labelled and sanitised (see Describe)
	Schema      json.RawMessage // the input schema, its texts sanitised (see sanitizeSchema)
	ReadOnly    bool            // the server's readOnlyHint (a claim, not a fact)
	Flagged     bool            // the description or a schema text looked like an injection attempt
	Fingerprint string          // changes when description, schema or annotations do
}

// Allowed is a server's allowed_tools filter: nil allows every tool, an
// empty (non-nil) list none.
type Allowed []string

// Permits reports whether a tool may register.
func (a Allowed) Permits(tool string) bool {
	if a == nil {
		return true
	}
	for _, t := range a {
		if t == tool {
			return true
		}
	}
	return false
}

// Omitted is a tool kin leaves out although the server listed it (and
// allowed_tools permits it), and why. The rest of the server stays usable.
type Omitted struct {
	Name   string
	Reason string
}

// Vet turns a listing into definitions, in listing order. Tools that
// allowed does not permit are returned in skipped, tools that no model
// could be offered (an input schema that is not an object schema) in
// omitted; neither gets a name.
//
// redact (nil: none) removes the server's own secrets (its env and header
// values, URL credentials, sign-in tokens) from every text the model sees,
// the description and every string of the schema, before they are capped
// (a secret cut in two no longer matches): a server that writes its token
// into a description or a parameter's default would otherwise have it
// sent to the model service with every request, as its tool results never
// are. The fingerprint stays that of what the server sent.
func Vet(server string, raws []Raw, allowed Allowed, names *Names, redact func(string) string) (defs []Def, skipped []string, omitted []Omitted) {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	for _, r := range raws {
		t := r.Tool
		if !allowed.Permits(t.Name) {
			skipped = append(skipped, t.Name)
			continue
		}
		if why := objectSchema(r.Schema); why != "" {
			omitted = append(omitted, Omitted{Name: t.Name, Reason: why})
			continue
		}
		schema, schemaFlagged, err := sanitizeSchema(r.Schema, redact)
		if err != nil {
			omitted = append(omitted, Omitted{Name: t.Name, Reason: "its input schema cannot be read: " + err.Error()})
			continue
		}
		ro := t.Annotations != nil && t.Annotations.ReadOnlyHint
		desc, flagged := Describe(server, t.Name, redact(t.Description))
		defs = append(defs, Def{
			Server:      server,
			Name:        t.Name,
			Exposed:     names.Assign(server, t.Name),
			Description: desc,
			Schema:      schema,
			ReadOnly:    ro,
			Flagged:     flagged || schemaFlagged,
			Fingerprint: Fingerprint(t.Description, r.Schema, t.Annotations),
		})
	}
	return defs, skipped, omitted
}

// Fingerprint identifies a definition's meaning: the server's description
// and input schema as sent, and its annotations (the read-only,
// destructive, idempotent and open-world claims and the title). It is
// stored with "always allow" grants, so a grant answers only the
// definition the person saw.
func Fingerprint(desc string, schema json.RawMessage, ann *mcp.ToolAnnotations) string {
	annotations, _ := json.Marshal(ann) // a struct of plain fields: never fails
	h := sha256.New()
	h.Write([]byte(strconv.Quote(desc)))
	h.Write([]byte{0})
	h.Write(schema)
	h.Write([]byte{0})
	h.Write(annotations)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Changes compares a new set of definitions with the previous one (both by
// tool name on the server).
type Changes struct {
	Added     []string // names not in the previous set
	Redefined []string // same name, different fingerprint
	Removed   []string // names no longer listed
}

// Compare reports how next differs from prev.
func Compare(prev, next []Def) Changes {
	var c Changes
	old := map[string]string{}
	for _, d := range prev {
		old[d.Name] = d.Fingerprint
	}
	seen := map[string]bool{}
	for _, d := range next {
		seen[d.Name] = true
		fp, ok := old[d.Name]
		switch {
		case !ok:
			c.Added = append(c.Added, d.Name)
		case fp != d.Fingerprint:
			c.Redefined = append(c.Redefined, d.Name)
		}
	}
	for _, d := range prev {
		if !seen[d.Name] {
			c.Removed = append(c.Removed, d.Name)
		}
	}
	return c
}
