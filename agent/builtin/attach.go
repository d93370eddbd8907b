package builtin

import (
	"context"
	"fmt"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/files"
	"github.com/kin-dev/kin/agent/tool"
)

// ReadAttachment reads a file a person attached to a question (an ACP
// client's resource_link) under read_file's rules: inside the session's
// folders (through symlinks and ".."), as the person sees it (the
// editor's buffer first), at most max bytes, and never a secret (the
// trust boundary's: $KIN_HOME, credentials, .env files, private keys). It
// returns the content and the path as kin shows it.
func ReadAttachment(ctx context.Context, env tool.Env, path string, max int64) ([]byte, string, error) {
	ws, err := workspaceOf(env)
	if err != nil {
		return nil, "", err
	}
	t, err := confined(ws, path)
	if err != nil {
		return nil, "", err
	}
	if why := ws.Secret(t); why != "" {
		return nil, t.Disp, fmt.Errorf("%s may hold a secret (%s): kin does not attach it; paste what the model may see, or ask for it to be read (read_file asks you first)", t.Disp, why)
	}
	f, err := openFile(ctx, filesOf(env), t)
	if err != nil {
		return nil, t.Disp, err
	}
	data, err := files.ReadAll(f, max)
	if err != nil {
		return nil, t.Disp, fmt.Errorf("%s: %w", t.Disp, err)
	}
	if why := boundary.SecretContent(data); why != "" {
		return nil, t.Disp, fmt.Errorf("%s may hold a secret (%s): kin does not attach it", t.Disp, why)
	}
	return data, t.Disp, nil
}
