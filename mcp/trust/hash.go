package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/kin-dev/kin/mcp/config"
)

// identity is the canonical form of a server's launch-affecting fields.
// Field order is fixed and encoding/json sorts the env map's keys; nil and
// empty collections hash alike.
type identity struct {
	Transport config.Transport  `json:"transport"`
	Command   string            `json:"command"`
	Args      []string          `json:"args"`
	URL       string            `json:"url"`
	Env       map[string]string `json:"env"`
	// Sandbox is config.Sandbox.Key(): "" (left out, so grants of entries
	// without the field stand) for the default confinement.
	Sandbox string `json:"sandbox,omitempty"`
	// HeaderRefs is config.Server.HeaderRefs: which of the person's
	// variables each header sends (never a value; left out when none, so
	// grants of entries without references stand). A rotated value is the
	// same launch; a header sending another variable is not.
	HeaderRefs []string `json:"headerRefs,omitempty"`
}

// Hash returns "sha256:<hex>" over the server's transport, command, args,
// url and env (expanded values), sandbox field and the variables its
// headers reference (names, not values). Two servers with the same hash launch the
// same way; the name is not part of the hash (grants pair it separately).
func Hash(s config.Server) string {
	id := identity{Transport: s.Transport, Command: s.Command, Args: s.Args, URL: s.URL, Env: s.Env, Sandbox: s.Sandbox.Key(), HeaderRefs: s.HeaderRefs()}
	if id.Args == nil {
		id.Args = []string{}
	}
	if id.Env == nil {
		id.Env = map[string]string{}
	}
	data, err := json.Marshal(id)
	if err != nil { // cannot happen for strings, slices and string maps
		panic(err)
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}
