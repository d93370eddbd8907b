package builtin

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/kin-dev/kin/agent/tool"
)

//go:embed edit_file.md
var editFileDescription string

const editFileSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to edit: relative to the first workspace folder, or absolute."},
    "old_string": {"type": "string", "description": "Exact text to replace; must occur exactly once in the file."},
    "new_string": {"type": "string", "description": "Replacement text."},
    "edits": {
      "type": "array",
      "description": "Several replacements, applied in order (instead of old_string/new_string).",
      "minItems": 1,
      "items": {
        "type": "object",
        "properties": {
          "old_string": {"type": "string", "description": "Exact text to replace; must occur exactly once."},
          "new_string": {"type": "string", "description": "Replacement text."}
        },
        "required": ["old_string", "new_string"],
        "additionalProperties": false
      }
    }
  },
  "required": ["path"],
  "additionalProperties": false
}`

type editFileTool struct{}

type editFileArgs struct {
	Path      string     `json:"path"`
	OldString *string    `json:"old_string"`
	NewString *string    `json:"new_string"`
	Edits     []editPair `json:"edits"`
}

type editPair struct {
	OldString *string `json:"old_string"`
	NewString *string `json:"new_string"`
}

func (editFileTool) Spec() tool.Spec {
	return spec(NameEditFile, editFileDescription, editFileSchema, tool.KindEdit)
}

func (editFileTool) Prepare(ctx context.Context, env tool.Env, raw json.RawMessage) (*tool.Action, error) {
	var args editFileArgs
	if err := decodeArgs(NameEditFile, raw, &args, "path"); err != nil {
		return nil, err
	}
	edits := args.Edits
	single := args.OldString != nil || args.NewString != nil
	switch {
	case single && len(edits) > 0:
		return nil, errors.New("edit_file: give either old_string and new_string, or edits, not both")
	case single && (args.OldString == nil || args.NewString == nil):
		return nil, errors.New("edit_file: old_string and new_string go together; give both")
	case single:
		edits = []editPair{{OldString: args.OldString, NewString: args.NewString}}
	case args.Edits == nil:
		return nil, errors.New("edit_file: give old_string and new_string, or edits")
	case len(edits) == 0:
		return nil, errors.New("edit_file: edits is empty; give at least one {old_string, new_string}")
	}
	for i, e := range edits {
		if e.OldString == nil || e.NewString == nil {
			return nil, fmt.Errorf("edit_file: edits[%d] needs both old_string and new_string", i)
		}
	}

	fc, err := loadForChange(ctx, NameEditFile, env, args.Path)
	if err != nil {
		return nil, err
	}
	if !fc.existed {
		return nil, fmt.Errorf("edit_file: %s does not exist; use write_file to create it", fc.t.Disp)
	}
	if bytes.IndexByte(fc.old, 0) >= 0 {
		return nil, fmt.Errorf("edit_file: %s is a binary file; only text files are edited", fc.t.Disp)
	}
	where := fc.t.Disp
	if fc.unsaved {
		where += " (as open in the editor, with unsaved changes)"
	}
	content := string(fc.old)
	crlf := strings.Contains(content, "\r\n")
	// every line of the file ends in CRLF (a Windows file): the lines a
	// replacement adds end so too, or the file comes out with mixed line
	// ends (git shows ^M, editors flag it)
	allCRLF := isCRLF(content)
	for i, e := range edits {
		nth := ""
		if len(edits) > 1 {
			nth = fmt.Sprintf("edit %d of %d: ", i+1, len(edits))
		}
		oldS, newS := *e.OldString, *e.NewString
		if oldS == "" {
			return nil, fmt.Errorf("edit_file: %sold_string is empty; to create or replace a whole file use write_file", nth)
		}
		if oldS == newS {
			return nil, fmt.Errorf("edit_file: %sold_string and new_string are the same; nothing would change", nth)
		}
		n := countOccurrences(content, oldS)
		if n == 0 && crlf && !strings.Contains(oldS, "\r\n") {
			// the file has CRLF line ends, the model wrote LF
			o := strings.ReplaceAll(oldS, "\n", "\r\n")
			if m := countOccurrences(content, o); m > 0 {
				oldS, newS, n = o, toCRLF(newS), m
			}
		} else if n > 0 && allCRLF && !strings.Contains(strings.ReplaceAll(oldS, "\r\n", ""), "\n") {
			// matched as given (one line, or CRLF already): a line break
			// the new text adds is still the model's LF
			newS = toCRLF(newS)
		}
		switch {
		case n == 0:
			return nil, fmt.Errorf("edit_file: %sold_string not found in %s; it must match the file exactly, whitespace and indentation included (read the file again)", nth, where)
		case n > 1:
			return nil, fmt.Errorf("edit_file: %sold_string occurs %d times in %s; include more context", nth, n, where)
		}
		content = strings.Replace(content, oldS, newS, 1)
	}
	fc.new = []byte(content)
	return fc.action("Edit")
}

// isCRLF reports whether every line of s ends in CRLF (and one does).
func isCRLF(s string) bool {
	n := strings.Count(s, "\r\n")
	return n > 0 && n == strings.Count(s, "\n")
}

// toCRLF ends every line of s in CRLF, whether it ended in LF or CRLF.
func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// countOccurrences counts s's occurrences of sub, overlapping ones too: an
// edit must name one place.
func countOccurrences(s, sub string) int {
	n := 0
	for i := 0; ; {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			return n
		}
		n++
		i += j + 1
		if i > len(s) {
			return n
		}
	}
}
