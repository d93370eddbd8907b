package builtin

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/files"
	"github.com/kin-dev/kin/agent/tool"
)

//go:embed read_file.md
var readFileDescription string

const readFileSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to read: relative to the first workspace folder, or absolute inside a workspace folder."},
    "offset": {"type": "integer", "minimum": 1, "description": "First line to show, 1-based. Default 1."},
    "limit": {"type": "integer", "minimum": 1, "description": "Number of lines to show. Default 2000."}
  },
  "required": ["path"],
  "additionalProperties": false
}`

const (
	readDefaultLimit = 2000
	// readMaxBytes bounds one page. The brief for this tool said 256 KiB,
	// but the turn loop cuts every result to tool.MaxOutput (64 KiB) from
	// the middle, which would lose lines silently; a page therefore stays
	// below it and says where to read on.
	readMaxBytes = tool.MaxOutput - 2<<10
	// readMaxLine is where a single long line is cut.
	readMaxLine = 2000
	// sniffLen is how much of a file decides whether it is binary.
	sniffLen = 8 << 10
)

type readFileTool struct{}

type readFileArgs struct {
	Path   string `json:"path"`
	Offset *int   `json:"offset"`
	Limit  *int   `json:"limit"`
}

func (readFileTool) Spec() tool.Spec {
	return spec(NameReadFile, readFileDescription, readFileSchema, tool.KindRead)
}

func (readFileTool) Prepare(ctx context.Context, env tool.Env, raw json.RawMessage) (*tool.Action, error) {
	var args readFileArgs
	if err := decodeArgs(NameReadFile, raw, &args, "path"); err != nil {
		return nil, err
	}
	offset, limit := 1, readDefaultLimit
	if args.Offset != nil {
		if offset = *args.Offset; offset < 1 {
			return nil, fmt.Errorf("read_file: offset is 1-based; %d is not a line number", offset)
		}
	}
	if args.Limit != nil {
		if limit = *args.Limit; limit < 1 {
			return nil, fmt.Errorf("read_file: limit must be at least 1, not %d", limit)
		}
	}
	ws, err := workspaceOf(env)
	if err != nil {
		return nil, fmt.Errorf("read_file: %v", err)
	}
	t, err := readable(ws, args.Path)
	if err != nil {
		return nil, fmt.Errorf("read_file: %v", err)
	}
	f, err := openFile(ctx, filesOf(env), t)
	if err != nil {
		return nil, fmt.Errorf("read_file: %v", err)
	}
	// Read once, now: opening again to run would read an editor's buffer
	// (and the file on disk, to tell whether it is saved) a second time, or
	// ask an ACP client for the file again. A read error is still the
	// call's result, reported when it runs. Nothing read reaches the model
	// before Run, and a secret's Run waits for the person's approval.
	out, key, err := readPage(ctx, f, t.Real, t.Disp, offset, limit)
	f.Close()
	return &tool.Action{Approval: secretRead(NameReadFile, ws, t, key), Run: func(context.Context, func(string)) tool.Result {
		if err != nil {
			return tool.Failed("read_file: " + err.Error())
		}
		return tool.Result{Status: tool.StatusCompleted, Output: out}
	}}, nil
}

// readPage reads lines [offset, offset+limit) of f (the file at p, or the
// editor's buffer of it), streaming: only the page is kept, the rest of the
// file is only counted. key says why the content is a secret (a private
// key), "" when it does not look like one. It stops at ctx's end: counting
// reads the whole file, and a file may be huge (a sparse terabyte a
// command made with truncate costs it no disk and took an hour to read,
// past every cancel).
func readPage(ctx context.Context, f *files.File, p, disp string, offset, limit int) (out, key string, err error) {
	unsaved := ""
	if f.Unsaved {
		unsaved = fmt.Sprintf("[%s has unsaved changes in the editor: this is the editor's buffer; commands see the file on disk]\n", disp)
	}
	if f.Size == 0 {
		return fmt.Sprintf("(%s is empty)", disp) + strings.TrimSuffix("\n"+unsaved, "\n"), "", nil
	}
	br := bufio.NewReaderSize(ctxReader{ctx, f}, 64<<10)
	sniff, err := br.Peek(sniffLen)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return "", "", fmt.Errorf("%s: %v", disp, unwrapPathError(err))
	}
	key = boundary.SecretContent(sniff)
	if looksBinary(sniff) {
		return fmt.Sprintf("%s: binary file, %d bytes, %s; not shown", disp, f.Size, guessType(p, sniff)), key, nil
	}
	out, err = readLines(br, f, disp, offset, limit, unsaved)
	if key == "" {
		// a key further down than the sniff, on the page asked for
		key = boundary.SecretContent([]byte(out))
	}
	return out, key, err
}

// readLines is readPage's page, read on from br.
func readLines(br *bufio.Reader, f *files.File, disp string, offset, limit int, unsaved string) (string, error) {

	var (
		out      strings.Builder
		line     []byte // the current line, cut at readMaxLine
		lineLen  int    // its full length
		n        int    // lines seen
		first    = 0    // first line shown
		last     = 0    // last line shown
		full     bool   // the page is full: stop collecting, count on
		eof      bool
		lastByte byte
	)
	out.Grow(min(int(f.Size), readMaxBytes) + 256)
	numW := len(fmt.Sprint(min(offset+limit, 9999999)))
	numW = max(numW, 6)
	emit := func() {
		n++
		if n < offset {
			return
		}
		text := bytes.TrimSuffix(bytes.TrimSuffix(line, []byte{'\n'}), []byte{'\r'})
		var num [20]byte
		digits := strconv.AppendInt(num[:0], int64(n), 10)
		size := max(numW, len(digits)) + 1 + len(text) + 1
		if lineLen > readMaxLine {
			size += 48
		}
		if last > 0 && out.Len()+size > readMaxBytes {
			full = true
			return
		}
		for i := len(digits); i < numW; i++ {
			out.WriteByte(' ')
		}
		out.Write(digits)
		out.WriteByte('\t')
		if utf8.Valid(text) {
			out.Write(text)
		} else {
			out.WriteString(strings.ToValidUTF8(string(text), "\uFFFD"))
		}
		if lineLen > readMaxLine {
			fmt.Fprintf(&out, " [... line cut: %d bytes in all]", lineLen)
		}
		out.WriteByte('\n')
		if first == 0 {
			first = n
		}
		last = n
		if n-offset+1 >= limit {
			full = true
		}
	}
	for !full {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			lastByte = chunk[len(chunk)-1]
			if n+1 >= offset && len(line) < readMaxLine {
				line = append(line, chunk[:min(len(chunk), readMaxLine-len(line))]...)
			}
			lineLen += len(chunk)
			if lastByte == '\n' {
				emit()
				line, lineLen = line[:0], 0
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			eof = true
			if lineLen > 0 {
				emit()
			}
			break
		}
		if err != nil {
			return "", fmt.Errorf("%s: %v", disp, unwrapPathError(err))
		}
	}
	total := n
	if full && !eof {
		// count the lines left without keeping them
		buf := make([]byte, 32<<10)
		for {
			k, err := br.Read(buf)
			if k > 0 {
				total += bytes.Count(buf[:k], []byte{'\n'})
				lastByte = buf[k-1]
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return "", fmt.Errorf("%s: %v", disp, unwrapPathError(err))
			}
		}
		if lastByte != '\n' {
			total++ // a last line without a newline
		}
	}
	if first == 0 {
		return "", fmt.Errorf("offset %d is past the end of %s (%s)", offset, disp, plural(total, "line"))
	}
	if first > 1 || last < total {
		fmt.Fprintf(&out, "[showing lines %d-%d of %d", first, last, total)
		if last < total {
			fmt.Fprintf(&out, "; call again with offset=%d", last+1)
		}
		out.WriteString("]\n")
	}
	out.WriteString(unsaved)
	return out.String(), nil
}

// ctxReader is r that fails every read once ctx has ended.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// looksBinary: a NUL byte in the sniffed prefix, or more than 10% of it not
// UTF-8.
func looksBinary(sniff []byte) bool {
	if bytes.IndexByte(sniff, 0) >= 0 {
		return true
	}
	bad := 0
	for i := 0; i < len(sniff); {
		r, size := utf8.DecodeRune(sniff[i:])
		if r == utf8.RuneError && size == 1 {
			if len(sniff)-i < utf8.UTFMax && !utf8.FullRune(sniff[i:]) {
				break // a rune cut by the sniff's end
			}
			bad++
		}
		i += size
	}
	return bad*10 > len(sniff)
}

// guessType names a binary file's type from its magic bytes, else from its
// extension.
func guessType(p string, sniff []byte) string {
	switch {
	case bytes.HasPrefix(sniff, []byte("\x7fELF")):
		return "type ELF executable (guessed from its magic bytes)"
	case bytes.HasPrefix(sniff, []byte("SQLite format 3\x00")):
		return "type SQLite database (guessed from its magic bytes)"
	case bytes.HasPrefix(sniff, []byte{0xcf, 0xfa, 0xed, 0xfe}), bytes.HasPrefix(sniff, []byte{0xca, 0xfe, 0xba, 0xbe}):
		return "type Mach-O or Java class file (guessed from its magic bytes)"
	}
	if ct := http.DetectContentType(sniff); ct != "application/octet-stream" && !strings.HasPrefix(ct, "text/plain") {
		return "type " + ct + " (guessed from its magic bytes)"
	}
	if ext := filepath.Ext(p); ext != "" {
		if ct := mime.TypeByExtension(ext); ct != "" {
			return "type " + ct + " (guessed from its extension)"
		}
	}
	return "type unknown"
}
