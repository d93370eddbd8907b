package builtin

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/files"
	"github.com/kin-dev/kin/agent/tool"
)

//go:embed search.md
var searchDescription string

const searchSchema = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "Go (RE2) regular expression matched against each line, e.g. func \\w+Handler\\( or (?i)todo."},
    "path": {"type": "string", "description": "Directory or file to search, relative to the first workspace folder or absolute inside a workspace folder. Default: every workspace folder."},
    "glob": {"type": "string", "description": "Only files matching this glob: without / it matches file names (*.go, *.{ts,tsx}), with / paths relative to path (src/**/*.go)."},
    "maxMatches": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "Stop after this many matching lines. Default 200."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

const (
	searchDefaultMatches = 200
	searchMaxMatches     = 1000
	searchMaxFileSize    = 16 << 20
	searchMaxLine        = 300
)

type searchTool struct{}

type searchArgs struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	MaxMatches *int   `json:"maxMatches"`
}

func (searchTool) Spec() tool.Spec {
	return spec(NameSearch, searchDescription, searchSchema, tool.KindRead)
}

// searchStart is one place a search begins.
type searchStart struct {
	root    int    // index of the workspace root holding it
	real    string // its real path
	rootRel string // relative to that root, '/'-separated ("" for the root)
	disp    string
	isFile  bool
}

func (searchTool) Prepare(ctx context.Context, env tool.Env, raw json.RawMessage) (*tool.Action, error) {
	var args searchArgs
	if err := decodeArgs(NameSearch, raw, &args, "pattern"); err != nil {
		return nil, err
	}
	if args.Pattern == "" {
		return nil, errors.New("search: the pattern is empty")
	}
	s := &searcher{max: searchDefaultMatches, fa: filesOf(env)}
	if args.MaxMatches != nil {
		if s.max = *args.MaxMatches; s.max < 1 || s.max > searchMaxMatches {
			return nil, fmt.Errorf("search: maxMatches must be between 1 and %d, not %d", searchMaxMatches, s.max)
		}
	}
	var err error
	if s.re, err = regexp.Compile(args.Pattern); err != nil {
		return nil, fmt.Errorf("search: bad pattern (Go RE2 syntax; escape ( ) [ ] . * + ? { } | \\ to match them literally): %v", err)
	}
	if !strings.Contains(args.Pattern, `\A`) && !strings.Contains(args.Pattern, `\z`) && !strings.Contains(args.Pattern, "-m") {
		// the whole-file prefilter: any line match is a match of this
		s.quick, _ = regexp.Compile("(?m)" + args.Pattern)
	}
	if args.Glob != "" {
		if s.glob, err = compileGlob(args.Glob, true); err != nil {
			return nil, fmt.Errorf("search: %v", err)
		}
	}
	ws, err := workspaceOf(env)
	if err != nil {
		return nil, fmt.Errorf("search: %v", err)
	}
	s.ws = ws
	roots, real := ws.Roots(), ws.Real()
	var ap *tool.Approval
	if args.Path == "" {
	next:
		for i := range roots {
			for j := range real {
				if j != i && boundary.Within(real[j], real[i]) && (real[j] != real[i] || j < i) {
					continue next // nested in (or the same as) another root: searched there
				}
			}
			if fi, err := boundary.Stat(real[i]); err == nil && fi.IsDir() {
				s.starts = append(s.starts, searchStart{root: i, real: real[i], disp: ws.Display(roots[i])})
			}
		}
		if len(s.starts) == 0 {
			return nil, errors.New("search: no workspace folder exists")
		}
	} else {
		t, err := confined(ws, args.Path)
		if err != nil {
			return nil, fmt.Errorf("search: %v", err)
		}
		fi, err := boundary.Stat(t.Real)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("search: %s does not exist", t.Disp)
			}
			return nil, fmt.Errorf("search: %s: %v", t.Disp, unwrapPathError(err))
		}
		rel := ws.Rel(t)
		s.starts = []searchStart{{root: t.Root, real: t.Real, rootRel: rel, disp: t.Disp, isFile: !fi.IsDir()}}
		// Searching a secret (or inside a credentials folder) by name is
		// reading it: asked, each time. Anywhere else secrets are skipped.
		if ap = secretRead(NameSearch, ws, t, ""); ap != nil {
			ap.Title = "Search " + t.Disp
			s.asked = true
		}
	}
	s.pattern = args.Pattern
	s.dollar = strings.Contains(args.Pattern, "$")
	return &tool.Action{Approval: ap, Run: func(ctx context.Context, _ func(string)) tool.Result {
		return s.run(ctx)
	}}, nil
}

// searcher is one prepared search.
type searcher struct {
	ws *boundary.Workspace
	// asked: the person approved searching a secret path itself, so
	// secrets below it are searched too (elsewhere they are skipped).
	asked bool
	// skipped counts the secret files left out.
	skipped atomic.Int64
	fa      files.Access // open buffers are searched instead of their files
	starts  []searchStart
	pattern string
	re      *regexp.Regexp // per line
	quick   *regexp.Regexp // per file, to skip files without a match fast
	dollar  bool           // the pattern may anchor at a line's end ($)
	glob    *glob
	max     int
}

type searchJob struct {
	idx  int
	abs  string
	disp string
}

// fileHits is what one file gave.
type fileHits struct {
	lines []string
	large bool
}

func (s *searcher) run(ctx context.Context) tool.Result {
	ctx, stop := context.WithCancel(ctx)
	defer stop()

	var (
		mu      sync.Mutex
		hits    []fileHits
		done    []bool
		prefix  int // files [0, prefix) are all done
		count   int // matches in them
		stopped bool
	)
	record := func(idx int, h fileHits) {
		mu.Lock()
		defer mu.Unlock()
		for len(done) <= idx {
			hits = append(hits, fileHits{})
			done = append(done, false)
		}
		hits[idx], done[idx] = h, true
		for prefix < len(done) && done[prefix] {
			count += len(hits[prefix].lines)
			prefix++
		}
		if count >= s.max && !stopped {
			// the first s.max matches in path order are known
			stopped = true
			stop()
		}
	}

	jobs := make(chan searchJob, 256)
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for j := range jobs {
				if ctx.Err() != nil {
					record(j.idx, fileHits{})
					continue
				}
				var h fileHits
				h, buf = s.searchFile(j.abs, j.disp, buf)
				record(j.idx, h)
			}
		}()
	}

	n := 0
	send := func(abs, disp string) error {
		select {
		case jobs <- searchJob{idx: n, abs: abs, disp: disp}:
			n++
			return nil
		case <-ctx.Done():
			return errStopWalk
		}
	}
	var walkErr error
	for _, st := range s.starts {
		if st.isFile {
			if send(st.real, st.disp) != nil {
				break
			}
			continue
		}
		err := treeWalk(ctx, s.ws, s.ws.Real()[st.root], st.real, func(abs string, elems []string, e fs.DirEntry) error {
			if !e.Type().IsRegular() {
				return nil // directories are walked, symlinks and devices skipped
			}
			rel := joinElems(elems)
			if s.glob != nil && !s.glob.match(rel) {
				return nil
			}
			if !s.asked && s.ws.SecretPath(abs) != "" {
				s.skipped.Add(1)
				return nil
			}
			return send(abs, s.ws.DisplayReal(st.root, path.Join(st.rootRel, rel)))
		})
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				walkErr = err
			}
			break
		}
	}
	close(jobs)
	wg.Wait()

	if err := ctx.Err(); err != nil && !stopped {
		return tool.Failed("search: cancelled")
	}
	if walkErr != nil {
		return tool.Failed("search: " + walkErr.Error())
	}

	var sb strings.Builder
	shown, large := 0, 0
	for i := 0; i < prefix; i++ {
		if hits[i].large {
			large++
		}
		for _, l := range hits[i].lines {
			if shown == s.max {
				break
			}
			sb.WriteString(l)
			sb.WriteByte('\n')
			shown++
		}
	}
	if shown == 0 {
		where := "the workspace"
		if len(s.starts) == 1 && s.starts[0].rootRel != "" {
			where = s.starts[0].disp
		}
		fmt.Fprintf(&sb, "no matches for %q in %s", s.pattern, where)
		if s.glob != nil {
			fmt.Fprintf(&sb, " (files matching %s)", s.glob)
		}
		sb.WriteString("; gitignored and binary files are not searched\n")
	}
	if stopped {
		fmt.Fprintf(&sb, "[stopped at %d matches; there may be more: narrow the pattern, path or glob, or raise maxMatches]\n", s.max)
	}
	if large > 0 {
		fmt.Fprintf(&sb, "[%s over %d MiB not searched]\n", plural(large, "file"), searchMaxFileSize>>20)
	}
	if n := s.skipped.Load(); n > 0 {
		fmt.Fprintf(&sb, "[%s that may hold secrets (.env files, keys, credentials) not searched; read_file asks the person for one]\n", plural(int(n), "file"))
	}
	out, cut := tool.Head(sb.String(), tool.MaxOutput)
	status := tool.StatusCompleted
	if cut {
		status = tool.StatusOutputLimit
	}
	return tool.Result{Status: status, Output: out}
}

// searchFile returns the matching lines of one file, formatted, at most
// s.max. buf is reused between files.
func (s *searcher) searchFile(abs, disp string, buf []byte) (fileHits, []byte) {
	data, ok := s.fa.Buffer(abs) // what the person sees, when the file is open
	if !ok {
		var large bool
		var err error
		data, buf, large, err = readSmall(abs, buf, searchMaxFileSize)
		if err != nil {
			return fileHits{}, buf
		}
		if large {
			return fileHits{large: true}, buf
		}
	}
	if looksBinaryFast(data) {
		return fileHits{}, buf
	}
	if !s.asked && boundary.SecretContent(data) != "" {
		s.skipped.Add(1)
		return fileHits{}, buf
	}
	// The prefilter's $ matches before "\n" only: in a file with CRLF line
	// ends it would pass by the matches a line's $ finds (see below).
	if s.quick != nil && !(s.dollar && bytes.IndexByte(data, '\r') >= 0) && !s.quick.Match(data) {
		return fileHits{}, buf
	}
	var h fileHits
	for lineNo := 1; len(data) > 0; lineNo++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		// a line without its newline, "\r\n" included: `\{$` finds the
		// lines of a CRLF file too (read_file shows them without the CR,
		// so the model cannot tell it should allow for one)
		line = trimCR(line)
		loc := s.re.FindIndex(line)
		if loc == nil {
			continue
		}
		h.lines = append(h.lines, fmt.Sprintf("%s:%d: %s", disp, lineNo, clipLine(line, loc)))
		if len(h.lines) == s.max {
			break
		}
	}
	return h, buf
}

// looksBinaryFast: a NUL byte in the first 8 KiB (what grep -I checks).
func looksBinaryFast(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), sniffLen)], 0) >= 0
}

// clipLine shows a line for a match at loc: whole when short, else about
// searchMaxLine bytes around the match.
func clipLine(line []byte, loc []int) string {
	line = trimCR(line)
	if len(line) <= searchMaxLine {
		return strings.ToValidUTF8(string(line), "\uFFFD")
	}
	start := 0
	if loc[0] > searchMaxLine/3 {
		start = loc[0] - searchMaxLine/3
	}
	end := min(len(line), start+searchMaxLine)
	start = max(0, end-searchMaxLine)
	for start > 0 && start < len(line) && !utf8.RuneStart(line[start]) {
		start++
	}
	for end < len(line) && end > start && !utf8.RuneStart(line[end]) {
		end--
	}
	out := strings.ToValidUTF8(string(line[start:end]), "\uFFFD")
	if start > 0 {
		out = "…" + out
	}
	if end < len(line) {
		out += "…"
	}
	return out
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}
