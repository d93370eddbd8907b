package acp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/files"
)

// fileTimeout bounds one fs/* request to the client. A write not answered
// in time may have happened: it is unknown, never sent again.
const fileTimeout = 30 * time.Second

// filesFor is a session's file access: through the client when it offers
// fs/read_text_file (reads see its unsaved buffers) and fs/write_text_file
// (approved writes go through it, so its review shows them), else the
// disk. Paths reach it after kin's path rules and the person's approval
// (files.Access's contract), and each is checked again against the trust
// boundary's resolver before it goes to the client (beneath): the client is
// never a way around the gate, nor a way out of the workspace folders.
func (s *Server) filesFor(sessionID string) files.Access {
	caps := s.clientCaps()
	if !caps.FS.ReadTextFile && !caps.FS.WriteTextFile {
		return nil
	}
	return clientFiles{s: s, sessionID: sessionID, read: caps.FS.ReadTextFile, write: caps.FS.WriteTextFile}
}

// clientFiles implements files.Access with the client's fs/* methods.
type clientFiles struct {
	s           *Server
	sessionID   string
	read, write bool
}

// beneath refuses a path that the client would follow out of its
// workspace folder: the client resolves symlinks on its own, so kin asks
// the trust boundary's resolver first (boundary.Stat: beneath the folder,
// through one os.Root) whether the path, symlinks followed, stays inside.
func beneath(path string) error {
	if _, err := boundary.Stat(path); errors.Is(err, boundary.ErrOutside) {
		return fmt.Errorf("refused: %s %w", path, err)
	}
	return nil
}

// Open implements files.Access. What the path is (a directory, a device)
// comes from the disk; its content from the client.
func (c clientFiles) Open(ctx context.Context, path string) (*files.File, error) {
	if !c.read {
		return files.Disk{}.Open(ctx, path)
	}
	if err := beneath(path); err != nil {
		return nil, err
	}
	st, statErr := boundary.Stat(path)
	switch {
	case statErr == nil && st.IsDir():
		return nil, fmt.Errorf("%s: %w", path, files.ErrIsDir)
	case statErr == nil && !st.Mode().IsRegular():
		return nil, fmt.Errorf("%s: %w", path, files.ErrNotRegular)
	}
	text, err := c.readText(ctx, path)
	if err != nil {
		return nil, err
	}
	unsaved := true // only the client has it
	if statErr == nil {
		unsaved = st.Size() != int64(len(text)) // the disk is read only when the sizes leave it open
		if !unsaved {
			if disk, err := boundary.ReadFile(path); err == nil {
				unsaved = string(disk) != text
			}
		}
	}
	return &files.File{ReadCloser: io.NopCloser(strings.NewReader(text)), Size: int64(len(text)), From: files.ViaEditor, Unsaved: unsaved}, nil
}

func (c clientFiles) readText(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, fileTimeout)
	defer cancel()
	var resp ReadTextFileResponse
	err := c.s.call(ctx, "fs", MethodReadTextFile, ReadTextFileRequest{SessionID: c.sessionID, Path: path}, &resp)
	var re *jsonrpc2.Error
	switch {
	case err == nil:
		return resp.Content, nil
	case errors.As(err, &re) && re.Code == CodeResourceNotFound:
		return "", fmt.Errorf("%s: %w", path, fs.ErrNotExist)
	case errors.As(err, &re):
		if _, statErr := boundary.Stat(path); errors.Is(statErr, fs.ErrNotExist) {
			return "", fmt.Errorf("%s: %w (the editor: %s)", path, fs.ErrNotExist, re.Message)
		}
		return "", fmt.Errorf("the editor could not read %s: %s", path, re.Message)
	}
	return "", fmt.Errorf("reading %s through the editor: %w", path, err)
}

// Buffer implements files.Access: kin holds no buffers of an ACP client
// (search reads the disk).
func (clientFiles) Buffer(string) ([]byte, bool) { return nil, false }

// Plan implements files.Access.
func (c clientFiles) Plan(ctx context.Context, path string) (files.Via, error) {
	if c.write {
		return files.ViaEditor, nil
	}
	return files.ViaDisk, nil
}

// Write implements files.Access: the file is read again through the
// client (ErrConflict when it no longer holds what the diff was shown
// against), then fs/write_text_file is sent once. The path's write lock
// (files.LockPath, the one files.Disk holds) is kept from that read to the
// client's answer: two of kin's writes of one file running side by side
// (an answer's delegate calls, each subagent writing through its parent's
// client) would otherwise both find the old content and both write, one
// change lost and both reported done.
func (c clientFiles) Write(ctx context.Context, ch files.Change) (files.Written, error) {
	if !c.write {
		return files.Disk{}.Write(ctx, ch) // which holds the lock itself
	}
	if err := beneath(ch.Path); err != nil {
		return files.Written{}, err
	}
	unlock, err := files.LockPath(ctx, ch.Path)
	if err != nil {
		return files.Written{}, err
	}
	defer unlock()
	if c.read {
		now, err := c.readText(ctx, ch.Path)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return files.Written{}, err
		}
		if exists && !ch.Existed && now == "" {
			// A file kin creates: a client may open an empty buffer for
			// it once the person approved (avante.nvim does, having
			// answered the first read "not found"). No file and an empty
			// new buffer are the same starting point: nothing is lost.
			exists = false
		}
		if exists != ch.Existed || (exists && now != string(ch.Old)) {
			return files.Written{}, files.ErrConflict
		}
	} else { // without fs/read_text_file, the disk is what the diff was shown against
		// Read no more than the diff's old content: a file grown past it
		// (a sparse terabyte swapped in meanwhile) is a conflict, not a
		// read that never ends.
		disk, err := boundary.ReadFileUpTo(ch.Path, int64(len(ch.Old)))
		exists := err == nil
		if errors.Is(err, boundary.ErrTooLarge) {
			return files.Written{}, files.ErrConflict
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return files.Written{}, err
		}
		if exists != ch.Existed || (exists && !bytes.Equal(disk, ch.Old)) {
			return files.Written{}, files.ErrConflict
		}
	}
	// The client follows a symlink at the path, or a folder along it
	// swapped for one, where kin's own write (boundary.WriteFile) would
	// not: the path must still be the file the person approved. Checked
	// last, the moment before the client is asked.
	if err := boundary.StillReal(ch.Path); err != nil {
		return files.Written{}, fmt.Errorf("refused: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, fileTimeout)
	defer cancel()
	err = c.s.call(wctx, "fs", MethodWriteTextFile, WriteTextFileRequest{SessionID: c.sessionID, Path: ch.Path, Content: string(ch.New)}, nil)
	var re *jsonrpc2.Error
	switch {
	case err == nil:
		return files.Written{Via: files.ViaEditor, Saved: true}, nil
	case errors.As(err, &re):
		return files.Written{}, fmt.Errorf("%w: %s", files.ErrRefused, re.Message)
	case ctx.Err() != nil:
		return files.Written{}, fmt.Errorf("%w: the turn was cancelled while the editor was writing it; it is not sent again", files.ErrUnknown)
	}
	return files.Written{}, fmt.Errorf("%w: the editor did not answer within %s; it is not sent again", files.ErrUnknown, fileTimeout)
}
