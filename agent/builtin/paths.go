package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/files"
	"github.com/kin-dev/kin/agent/tool"
)

// workspaceOf is the session's trust boundary (tool.Env.Workspace), or one
// made from the call's roots: every path decision of the tools is its.
func workspaceOf(env tool.Env) (*boundary.Workspace, error) {
	if env.Workspace != nil {
		return env.Workspace, nil
	}
	return boundary.NewWorkspace(env.Roots, env.KinHome)
}

// confined resolves p and refuses it when it leaves the roots: what the read
// tools (and bash's cwd) use.
func confined(ws *boundary.Workspace, p string) (boundary.Target, error) {
	t, err := ws.Resolve(p)
	if err != nil {
		return t, err
	}
	if t.Outside != "" {
		return t, fmt.Errorf("refused: %s; this tool only reads inside the workspace folders", t.Outside)
	}
	return t, nil
}

// readable is confined for read_file, which may also read the files of a
// folder the trust boundary granted for reading (a skill the session
// loaded, outside the workspace); nothing else outside the roots.
func readable(ws *boundary.Workspace, p string) (boundary.Target, error) {
	t, err := ws.Resolve(p)
	if err != nil || t.Outside == "" || t.Granted != "" {
		return t, err
	}
	return confined(ws, p)
}

// secretRead is the approval a read of a secret needs (nil when t is no
// secret): kin reads $KIN_HOME, credentials and secret-looking files only
// when the person says so, each time, since what is read goes to the
// model.
func secretRead(toolName string, ws *boundary.Workspace, t boundary.Target, why string) *tool.Approval {
	if why == "" {
		why = ws.Secret(t)
	}
	if why == "" {
		return nil
	}
	return &tool.Approval{
		Title:     fmt.Sprintf("Read %s", t.Disp),
		Warning:   fmt.Sprintf("%s may hold a secret (%s): what %s reads is sent to the model.", t.Disp, why, toolName),
		AlwaysAsk: true,
	}
}

// filesOf is the session's file access: the editor's buffers first where
// the front end keeps them, else the disk.
func filesOf(env tool.Env) files.Access {
	if env.Files == nil {
		return files.Disk{}
	}
	return env.Files
}

// openFile opens a file the read tools work on, as the person sees it (its
// editor buffer when open there), with messages naming t as the model gave
// it. t has passed the path rules.
func openFile(ctx context.Context, fa files.Access, t boundary.Target) (*files.File, error) {
	f, err := fa.Open(ctx, t.Real)
	switch {
	case err == nil:
		return f, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s does not exist", t.Disp)
	case errors.Is(err, files.ErrIsDir):
		return nil, fmt.Errorf("%s is a directory; use list_dir to see what it holds", t.Disp)
	case errors.Is(err, files.ErrNotRegular):
		return nil, fmt.Errorf("%s %v", t.Disp, err)
	case errors.Is(err, boundary.ErrOutside):
		return nil, fmt.Errorf("refused: %s %v", t.Disp, err)
	}
	return nil, fmt.Errorf("%s: %v", t.Disp, err)
}

// unwrapPathError drops the path from an *os.PathError: messages name the
// path as the model gave it.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
