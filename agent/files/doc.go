// Package files is how kin's built-in tools read and write the person's
// files: one Access per session, used by every tool that reads a file's
// content (read_file, search, edit_file, write_file) and by every write.
//
// Reads see what the person sees: the editor's buffer when the file is open
// there (the Overlay an editor keeps up to date with textDocument/didOpen,
// didChange and didClose), the file on disk otherwise. Writes go through
// the editor when it can apply edits to its open buffer (so its undo works
// and it never finds "the file is newer"), to disk otherwise, followed by a
// notice that makes the editor reload what changed. Disk is the Access of a
// front end without an editor; Buffers is kin serve's; the ACP front end
// implements Access with fs/read_text_file and fs/write_text_file.
//
// Every write of a built-in tool passes through Access.Write, and nowhere
// else: WithBeforeWrite wraps an Access so that something (checkpoints for
// turn/undo) sees each file's previous content before it is replaced.
//
// Another front end implements Access for its own editors, one per session
// (agent.Options.Files gets the session id). An ACP client, for example:
// Open asks fs/read_text_file (the client's buffer or its disk; a missing
// file wraps fs.ErrNotExist), Buffer returns false (search reads the disk),
// Plan returns ViaEditor, and Write reads the file again through the client
// (ErrConflict when it is no longer c.Old), then sends fs/write_text_file
// once: an error answer is ErrRefused, no answer within a bound (or ctx
// ending first) is ErrUnknown.
//
// What this package must never do:
//
//   - Never decide which paths may be touched: paths reach it after the
//     trust boundary's rules (package boundary: workspace confinement
//     through symlinks and "..", secrets, files that run things later) and
//     the person's approval. It is never a way around the gate.
//   - Never open, write or remove a file on disk except through the
//     boundary's resolver (beneath the workspace folder, one os.Root per
//     folder), so a symlink swapped in after the check cannot redirect it.
//   - Never write anything other than Change.New, and only while the file
//     (or buffer) still holds Change.Old: the content the diff was shown
//     against.
//   - Never clobber unsaved changes: a buffer that differs from its file
//     is changed through the editor or not at all.
//   - Never send or apply an edit twice: an edit the editor may have
//     applied (no answer in time, the turn cancelled while waiting, the
//     connection gone) is ErrUnknown, never retried, never written to disk.
//   - Never import JSON-RPC: the front end translates the wire to Overlay
//     calls and implements Editor.
package files
