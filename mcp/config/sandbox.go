package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// WorkspaceFolder is the one reference a sandbox "write" path may start
// with: the project folder the server is launched for.
const WorkspaceFolder = "${workspaceFolder}"

// Sandbox is an entry's "sandbox" field: how a stdio server's confinement
// differs from the default (read the workspace, write only its own state
// folder and temp, no kin home or secrets, network on). Nil is the default.
type Sandbox struct {
	// Off runs the server unconfined ("sandbox": "off").
	Off bool
	// Write are more folders it may change: absolute, "~/..." or
	// "${workspaceFolder}[/...]", as written (resolved at launch).
	Write []string
	// Network, when set, says whether it may reach the network (default
	// true).
	Network *bool
}

// Key is the canonical form of the setting, part of the launch identity
// (trust.Hash): "" for the default, so entries without the field keep
// their grants; any other setting is another launch, approved anew.
func (s *Sandbox) Key() string {
	if s == nil {
		return ""
	}
	if s.Off {
		return "off"
	}
	w := slices.Clone(s.Write)
	slices.Sort(w)
	w = slices.Compact(w)
	if len(w) == 0 && (s.Network == nil || *s.Network) {
		return ""
	}
	net := s.Network == nil || *s.Network
	b, _ := json.Marshal(struct {
		Write   []string `json:"write"`
		Network bool     `json:"network"`
	}{w, net})
	return string(b)
}

// Describe says the setting in words for the launch approval and kin mcp
// show ("" for the default).
func (s *Sandbox) Describe() string {
	switch {
	case s == nil || s.Key() == "":
		return ""
	case s.Off:
		return `"sandbox": "off"`
	}
	var parts []string
	if len(s.Write) > 0 {
		q := make([]string, len(s.Write))
		for i, w := range s.Write {
			q[i] = quoteIfNeeded(w)
		}
		parts = append(parts, "also writes "+strings.Join(q, ", "))
	}
	if s.Network != nil && !*s.Network {
		parts = append(parts, "no network")
	}
	return strings.Join(parts, "; ")
}

// maxSandboxWrite bounds the "write" list.
const maxSandboxWrite = 32

// decodeSandbox reads the "sandbox" field: "off", or an object with
// "write" (paths) and "network" (true or false).
func decodeSandbox(raw json.RawMessage) (*Sandbox, error) {
	raw = bytes.TrimSpace(raw)
	if isString(raw) {
		var s string
		_ = json.Unmarshal(raw, &s)
		if s == "off" {
			return &Sandbox{Off: true}, nil
		}
		return nil, fmt.Errorf(`"sandbox" must be "off" or an object {"write": [...], "network": false}, not %.40q`, s)
	}
	f, err := objectFields(raw)
	if err != nil {
		return nil, errors.New(`"sandbox" must be "off" or an object {"write": [...], "network": false}`)
	}
	for k := range f {
		if k != "write" && k != "network" {
			return nil, fmt.Errorf(`sandbox: unknown field %.40q (only "write" and "network")`, k)
		}
	}
	s := &Sandbox{}
	if _, err := f.strList("write", &s.Write); err != nil {
		return nil, fmt.Errorf("sandbox.%w", err)
	}
	if len(s.Write) > maxSandboxWrite {
		return nil, fmt.Errorf("sandbox.write has %d paths, more than %d", len(s.Write), maxSandboxWrite)
	}
	for i, w := range s.Write {
		if err := checkWritePath(w); err != nil {
			return nil, fmt.Errorf("sandbox.write[%d]: %v", i, err)
		}
	}
	if _, ok := f["network"]; ok {
		var net bool
		if _, err := f.boolean("network", &net); err != nil {
			return nil, fmt.Errorf("sandbox.%w", err)
		}
		s.Network = &net
	}
	return s, nil
}

func checkWritePath(p string) error {
	switch {
	case p == "":
		return errors.New("empty path")
	case strings.ContainsRune(p, 0):
		return errors.New("a path with a NUL byte")
	case p == WorkspaceFolder || strings.HasPrefix(p, WorkspaceFolder+"/"):
	case strings.HasPrefix(p, "~/") || filepath.IsAbs(p):
	default:
		return fmt.Errorf("%.80q is not absolute, ~/..., or %s/...", p, WorkspaceFolder)
	}
	if strings.Contains(strings.TrimPrefix(p, WorkspaceFolder), "${") {
		return fmt.Errorf("%.80q: only %s may be referenced", p, WorkspaceFolder)
	}
	return nil
}
