package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"strings"

	"github.com/kin-dev/kin/agent/tool"
)

//go:embed write_file.md
var writeFileDescription string

const writeFileSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to create or replace: relative to the first workspace folder, or absolute."},
    "content": {"type": "string", "description": "The complete new content of the file."}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`

type writeFileTool struct{}

type writeFileArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func (writeFileTool) Spec() tool.Spec {
	return spec(NameWriteFile, writeFileDescription, writeFileSchema, tool.KindEdit)
}

func (writeFileTool) Prepare(ctx context.Context, env tool.Env, raw json.RawMessage) (*tool.Action, error) {
	var args writeFileArgs
	if err := decodeArgs(NameWriteFile, raw, &args, "path", "content"); err != nil {
		return nil, err
	}
	fc, err := loadForChange(ctx, NameWriteFile, env, args.Path)
	if err != nil {
		return nil, err
	}
	fc.new = []byte(args.Content)
	if fc.existed && isCRLF(string(fc.old)) && !strings.Contains(args.Content, "\r") {
		// read_file shows a CRLF file's lines without their CR, so the
		// model writes it back with LF: every line would change (a diff
		// that shows nothing) and the file would stop being a Windows one
		fc.new = []byte(toCRLF(args.Content))
	}
	return fc.action("Write")
}
