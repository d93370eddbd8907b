package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/kin-dev/kin/agent/lockedfile"
	"github.com/kin-dev/kin/agent/visible"
)

// File names inside KIN_HOME.
const (
	FileName = "trust.json"
	// LegacyFileName is the launch trust of earlier kins, read until the
	// first write moves it into FileName.
	LegacyFileName = "mcp_trust.json"
	// Version is the ledger's format (mcp_trust.json was 1 and 2).
	Version = 3
)

// Kind is what an item is.
type Kind string

// Kinds of items.
const (
	// KindSkill is a repository's skill folder (.agents/skills/<name>,
	// .claude/skills/<name>): the digest covers every file in it.
	KindSkill Kind = "skill"
	// KindHook is one hook command of a project (.kin/hooks.json,
	// .claude/settings.json, .claude/settings.local.json): the digest
	// covers its configuration entry and the project's script it runs.
	KindHook Kind = "hook"
	// KindInstructions is a repository's instruction file (AGENTS.md,
	// CLAUDE.md).
	KindInstructions Kind = "instructions"
	// KindMCPSkill is a skill an MCP server serves (the Skills extension):
	// Path is "<server launch>|<uri>", the digest covers its manifest.
	KindMCPSkill Kind = "mcp_skill"
)

// Item is one thing the person trusted (or is asked to).
type Item struct {
	Kind Kind `json:"kind"`
	// Project is the project folder (real path) the item belongs to; ""
	// for an MCP skill (Path names its server).
	Project string `json:"project,omitempty"`
	// Path is the item's real path (a file, a skill's folder), or for an
	// MCP skill its server's launch identity and its URI.
	Path string `json:"path"`
	// Name is a skill's name, a hook's event and matcher.
	Name string `json:"name,omitempty"`
	// Digest is "sha256:<hex>" of what the person saw.
	Digest string `json:"digest"`
	// Display is what a person reads (a hook's command line, a skill's
	// description), cut short; never a secret.
	Display   string    `json:"display,omitempty"`
	TrustedAt time.Time `json:"trustedAt,omitzero"`
}

// ID identifies the item across digests: "item:sha256:<hex>" of its kind,
// project and path. trust/revoke takes it.
func (i Item) ID() string {
	sum := sha256.Sum256([]byte(string(i.Kind) + "\x00" + i.Project + "\x00" + i.Path))
	return "item:" + hex.EncodeToString(sum[:12])
}

// State is what the ledger says of an item.
type State string

// States.
const (
	StateNew     State = "new"     // never trusted
	StateTrusted State = "trusted" // trusted with this digest
	StateChanged State = "changed" // trusted with another digest
)

// File is the ledger as stored. Launches and Servers are package
// mcp/trust's records, kept here as they are.
type File struct {
	Version  int                        `json:"version"`
	Launches map[string]json.RawMessage `json:"launches"`
	Servers  map[string]json.RawMessage `json:"servers,omitempty"`
	Items    map[string]*Item           `json:"items"`
}

// ErrNotFound is Revoke's answer for an id that names nothing.
var ErrNotFound = errors.New("no such trust entry")

// Ledger is the trust file of one KIN_HOME.
type Ledger struct {
	home string
	now  func() time.Time
}

// Open returns the ledger of kinHome; the file need not exist.
func Open(kinHome string) *Ledger { return &Ledger{home: kinHome, now: time.Now} }

// Path is the ledger file's path.
func (l *Ledger) Path() string { return filepath.Join(l.home, FileName) }

func (l *Ledger) legacyPath() string { return filepath.Join(l.home, LegacyFileName) }

// Read returns the ledger: trust.json, else what mcp_trust.json held, else
// an empty one.
func (l *Ledger) Read() (*File, error) {
	data, err := os.ReadFile(l.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return l.legacy()
	}
	if err != nil {
		return nil, fmt.Errorf("read the trust ledger: %w", err)
	}
	return parse(l.Path(), data)
}

// legacy reads mcp_trust.json as a ledger (an empty one when absent).
func (l *Ledger) legacy() (*File, error) {
	data, err := os.ReadFile(l.legacyPath())
	if errors.Is(err, fs.ErrNotExist) {
		return parse(l.Path(), nil)
	}
	if err != nil {
		return nil, fmt.Errorf("read the trust file: %w", err)
	}
	return parse(l.legacyPath(), data)
}

func parse(path string, data []byte) (*File, error) {
	f := &File{}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, f); err != nil {
			return nil, fmt.Errorf("the trust ledger %s is malformed; fix or delete it (everything will be asked again)", path)
		}
	}
	f.Version = Version
	if f.Launches == nil {
		f.Launches = map[string]json.RawMessage{}
	}
	if f.Items == nil {
		f.Items = map[string]*Item{}
	}
	for k, it := range f.Items {
		if it == nil {
			delete(f.Items, k)
		}
	}
	return f, nil
}

// Check reports a ledger that exists but cannot be read or parsed.
func (l *Ledger) Check() error {
	_, err := l.Read()
	return err
}

// Update changes the ledger under its lock: fn gets the current content
// (carried over from mcp_trust.json on the first write) and the result is
// written atomically, 0600. An error from fn writes nothing.
func (l *Ledger) Update(fn func(*File) error) error {
	migrated := false
	err := lockedfile.Update(l.Path(), func(data []byte, exists bool) ([]byte, error) {
		var f *File
		var err error
		if exists {
			f, err = parse(l.Path(), data)
		} else {
			f, err = l.legacy()
			migrated = err == nil
		}
		if err != nil {
			return nil, err
		}
		if err := fn(f); err != nil {
			return nil, err
		}
		if len(f.Servers) == 0 {
			f.Servers = nil
		}
		out, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			return nil, err
		}
		return append(out, '\n'), nil
	})
	if err == nil && migrated {
		// What it held is in trust.json now; kept beside it, renamed, for
		// an older kin the person may go back to.
		if _, serr := os.Stat(l.legacyPath()); serr == nil {
			_ = os.Rename(l.legacyPath(), l.legacyPath()+".migrated")
		}
	}
	return err
}

// Status says whether the ledger trusts the item with its digest. It
// fails closed: an unreadable ledger trusts nothing.
func (l *Ledger) Status(it Item) State {
	f, err := l.Read()
	if err != nil {
		return StateNew
	}
	return status(f, it)
}

func status(f *File, it Item) State {
	r := f.Items[it.ID()]
	switch {
	case r == nil:
		return StateNew
	case r.Digest == it.Digest && it.Digest != "":
		return StateTrusted
	}
	return StateChanged
}

// Statuses is Status for many items with one read.
func (l *Ledger) Statuses(items []Item) []State {
	out := make([]State, len(items))
	f, err := l.Read()
	for i, it := range items {
		out[i] = StateNew
		if err == nil {
			out[i] = status(f, it)
		}
	}
	return out
}

// Projects are the projects with at least one trusted item of kind.
func (l *Ledger) Projects(kind Kind) map[string]bool {
	out := map[string]bool{}
	f, err := l.Read()
	if err != nil {
		return out
	}
	for _, it := range f.Items {
		if it.Kind == kind && it.Project != "" {
			out[it.Project] = true
		}
	}
	return out
}

// Trust records the items as trusted with their digests (replacing what an
// earlier grant of the same item held).
func (l *Ledger) Trust(items ...Item) error {
	now := l.now().UTC().Truncate(time.Second)
	return l.Update(func(f *File) error {
		for _, it := range items {
			if it.Kind == "" || it.Path == "" || it.Digest == "" {
				return fmt.Errorf("a trust entry needs a kind, a path and a digest")
			}
			it.TrustedAt = now
			it.Display = visible.Clip(it.Display, 200)
			f.Items[it.ID()] = &it
		}
		return nil
	})
}

// Revoke removes the item with this id (Item.ID).
func (l *Ledger) Revoke(id string) error {
	return l.Update(func(f *File) error {
		if _, ok := f.Items[id]; !ok {
			return fmt.Errorf("%w: %q", ErrNotFound, id)
		}
		delete(f.Items, id)
		return nil
	})
}

// Items lists the trusted items, by project, kind and path; nothing when
// the ledger cannot be read (Check says why).
func (l *Ledger) Items() []Item {
	f, err := l.Read()
	if err != nil {
		return nil
	}
	out := make([]Item, 0, len(f.Items))
	for _, it := range f.Items {
		out = append(out, *it)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Project != b.Project {
			return a.Project < b.Project
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Path < b.Path
	})
	return out
}
