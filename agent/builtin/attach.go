package builtin

import (
	"context"
	"fmt"

	"github.com/kin-dev/kin/agent/files"
	"github.com/kin-dev/kin/agent/tool"
)

// ReadAttachment reads a file a person attached to a question (an ACP
// client's resource_link) under read_file's rules: inside the session's
// folders (through symlinks and ".."), as the person sees it (the
// editor's buffer first), at most max bytes. It returns the content and
// the path as kin shows it.
func ReadAttachment(ctx context.Context, env tool.Env, path string, max int64) ([]byte, string, error) {
	ws, err := newWorkspace(env.Roots)
	if err != nil {
		return nil, "", err
	}
	t, err := ws.confined(path)
	if err != nil {
		return nil, "", err
	}
	f, err := openFile(ctx, filesOf(env), t)
	if err != nil {
		return nil, t.disp, err
	}
	data, err := files.ReadAll(f, max)
	if err != nil {
		return nil, t.disp, fmt.Errorf("%s: %w", t.disp, err)
	}
	return data, t.disp, nil
}
