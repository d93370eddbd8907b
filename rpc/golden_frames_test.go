package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/rpc/rpctest"
)

var update = flag.Bool("update", false, "rewrite the golden frames in testdata/golden")

// frame is one JSON-RPC message as it crossed the wire.
type frame struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      *int64          `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *jsonrpc2.Error `json:"error,omitempty"`
}

// goldenFile is one testdata/golden/<name>.json: every frame recorded for
// one method or notification, in order (a request is followed by its
// response).
type goldenFile struct {
	Method string            `json:"method"`
	Frames []json.RawMessage `json:"frames"`
}

// recorder drives the real server through the fake editor and keeps the
// frames of each method: requests it sends with their responses, and the
// notifications it picks.
type recorder struct {
	t  *testing.T
	ed *rpctest.Editor

	// ns tells this kin's question ids from another's ("ap_1" of two
	// servers are two questions): see forKin.
	ns string

	// mu guards frames and nextID (shared with forEditor's recorders).
	mu     *sync.Mutex
	frames map[string][]json.RawMessage
	nextID int64
	wires  *int // how many kins' wires addWire has recorded: see addWire
}

func newRecorder(t *testing.T, ed *rpctest.Editor) *recorder {
	return &recorder{t: t, ed: ed, mu: &sync.Mutex{}, frames: map[string][]json.RawMessage{}, nextID: 1 << 20, wires: new(int)}
}

// forEditor returns a recorder of the same frames driving another editor
// of the same kin.
func (r *recorder) forEditor(ed *rpctest.Editor) *recorder {
	return &recorder{t: r.t, ed: ed, ns: r.ns, mu: r.mu, frames: r.frames, nextID: r.nextID + 1<<16, wires: r.wires}
}

// forKin is forEditor for an editor of another kin, whose question ids
// are its own.
func (r *recorder) forKin(ed *rpctest.Editor, ns string) *recorder {
	o := r.forEditor(ed)
	o.ns = ns
	return o
}

var questionID = regexp.MustCompile(`"(ap|el)_(\d+)"`)

func (r *recorder) add(method string, f frame) {
	b, err := json.Marshal(f)
	if err != nil {
		r.t.Fatal(err)
	}
	r.mu.Lock()
	r.frames[method] = append(r.frames[method], b)
	r.mu.Unlock()
}

func (r *recorder) id() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nextID++
	return r.nextID
}

// lastID is the id of the request sent last.
func (r *recorder) lastID() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.nextID
}

// send calls method and records the request and its response. It returns
// the result, or the JSON-RPC error.
func (r *recorder) send(method string, params any) (json.RawMessage, *jsonrpc2.Error) {
	id := r.id()
	var p json.RawMessage
	if params != nil {
		var err error
		if p, err = json.Marshal(params); err != nil {
			r.t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), rpctest.Timeout)
	defer cancel()
	call, err := r.ed.Conn.DispatchCall(ctx, method, params, jsonrpc2.PickID(jsonrpc2.ID{Num: uint64(id)}))
	if err != nil {
		r.t.Fatalf("%s: %v", method, err)
	}
	var res json.RawMessage
	err = call.Wait(ctx, &res)
	req := frame{JSONRPC: "2.0", ID: &id, Method: method, Params: p}
	resp := frame{JSONRPC: "2.0", ID: &id}
	var rerr *jsonrpc2.Error
	switch e := err.(type) {
	case nil:
		if res == nil {
			res = json.RawMessage("null")
		}
		resp.Result = res
	case *jsonrpc2.Error:
		rerr, resp.Error = e, e
	default:
		r.t.Fatalf("%s: %v", method, err)
	}
	r.mu.Lock()
	b1, _ := json.Marshal(req)
	b2, _ := json.Marshal(resp)
	if resp.Error == nil {
		// A null result is a result: keep it.
		b2 = []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":%s}`, id, res))
	}
	r.frames[method] = append(r.frames[method], b1, b2)
	r.mu.Unlock()
	return res, rerr
}

// call is send that must succeed; out, when not nil, gets the result.
func (r *recorder) call(method string, params, out any) {
	r.t.Helper()
	res, err := r.send(method, params)
	if err != nil {
		r.t.Fatalf("%s: %v", method, err)
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			r.t.Fatalf("%s: %v", method, err)
		}
	}
}

// fail is send that must fail with code.
func (r *recorder) fail(method string, params any, code int64) {
	r.t.Helper()
	if _, err := r.send(method, params); err == nil || err.Code != code {
		r.t.Fatalf("%s: got %v, want code %d", method, err, code)
	}
}

// notify sends an editor notification and records it.
func (r *recorder) notify(method string, params any) {
	var p json.RawMessage
	if params != nil {
		p, _ = json.Marshal(params)
	}
	r.add(method, frame{JSONRPC: "2.0", Method: method, Params: p})
	r.ed.Notify(method, params)
}

// note waits for a notification kin sent and records it.
func (r *recorder) note(method string, match func(map[string]any) bool) map[string]any {
	r.t.Helper()
	m := r.ed.Wait(method, match)
	for _, n := range r.ed.Raw() {
		var v map[string]any
		if n.Method != method || json.Unmarshal(n.Params, &v) != nil || (match != nil && !match(v)) {
			continue
		}
		params := n.Params
		if r.ns != "" {
			params = questionID.ReplaceAll(params, []byte(`"${1}_`+r.ns+`${2}"`))
		}
		r.add(method, frame{JSONRPC: "2.0", Method: method, Params: params})
		break
	}
	return m
}

// addWire records frames that crossed an editor's pipe (rpctest's Wire):
// those of the methods keep picks, a request followed by its response
// (which keep is not asked about), from whichever side sent it.
//
// Every wire is another kin's, whose question ids ("ap_1", "el_1") count
// from 1 like every kin's: they are put in a namespace of their own, or
// one kin's "ap_1" would be normalised as whichever kin's "ap_1" happened
// to be seen first, and the files would change from run to run.
func (r *recorder) addWire(wire []rpctest.Frame, keep func(method string, m map[string]any) bool) {
	asked := map[string]string{} // "<from> <id>" of a kept request -> its method
	r.mu.Lock()
	*r.wires++
	ns := []byte(fmt.Sprintf(`"${1}_w%d${2}"`, *r.wires))
	r.mu.Unlock()
	for _, f := range wire {
		var m map[string]any
		if json.Unmarshal(f.Msg, &m) != nil {
			continue
		}
		method, _ := m["method"].(string)
		id, _ := json.Marshal(m["id"])
		other := "kin"
		if f.From == "kin" {
			other = "editor"
		}
		switch {
		case method != "" && keep(method, m):
			if m["id"] != nil {
				asked[f.From+" "+string(id)] = method
			}
		case method == "" && asked[other+" "+string(id)] != "":
			method = asked[other+" "+string(id)]
		default:
			continue
		}
		msg := questionID.ReplaceAll(append(json.RawMessage(nil), f.Msg...), ns)
		r.mu.Lock()
		r.frames[method] = append(r.frames[method], msg)
		r.mu.Unlock()
	}
}

// normalizer replaces what changes from run to run (ids, times, ports,
// temporary paths) with fixed, realistic values, consistently within the
// whole recording.
type normalizer struct {
	fixed []string // old, new pairs, applied first
	seen  map[string]string
	n     map[string]int
}

var volatile = []struct {
	re   *regexp.Regexp
	name func(n int) string
}{
	{regexp.MustCompile(`s_\d{8}T\d{6}_[0-9a-f]{6}`), func(n int) string { return fmt.Sprintf("s_20261130T2315%02d_4f3a9c", n) }},
	{regexp.MustCompile(`t_[0-9a-f]{8}`), func(n int) string { return fmt.Sprintf("t_%08d", n) }},
	{regexp.MustCompile(`p_\d{10,}_(\d+)`), func(n int) string { return fmt.Sprintf("p_1796081841718904_%d", n) }},
	// An MCP grant key names the server's launch identity, whose URL has a
	// test server's port.
	{regexp.MustCompile(`sha256:[0-9a-f]{64}`), func(n int) string { return fmt.Sprintf("sha256:%064x", 0x9f2ce41a+n) }},
	// Questions asked in parallel (server launches) are numbered in the
	// order they happened to be asked.
	{regexp.MustCompile(`"ap_[a-z]*\d+"`), func(n int) string { return fmt.Sprintf(`"ap_%d"`, n) }},
	{regexp.MustCompile(`"el_[a-z]*\d+"`), func(n int) string { return fmt.Sprintf(`"el_%d"`, n) }},
	// session/list's cursor: the last row's time in nanoseconds, then its id.
	{regexp.MustCompile(`"\d{18,19}\.`), func(n int) string { return `"1796081700000000000.` }},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`), func(n int) string { return "2026-11-30T23:15:00Z" }},
	// The sandbox's cache folder of a workspace is named by the folder's
	// identity (path, device, inode): another one in every run.
	{regexp.MustCompile(`cache/sandbox/[0-9a-f]{16}`), func(n int) string { return fmt.Sprintf("cache/sandbox/%016x", 0x5d1e0c6f2b9a47e3+n) }},
	// A trust ledger item's id hashes its project's real path.
	{regexp.MustCompile(`item:[0-9a-f]{24}`), func(n int) string { return fmt.Sprintf("item:%024x", 0x7a11e5+n) }},
	{regexp.MustCompile(`127\.0\.0\.1(:|%3A)\d{2,5}`), nil},
	{regexp.MustCompile(`(client_id|state|code_challenge)=[A-Za-z0-9_%-]+`), nil},
}

// cursorField is a session/resume cursor (an offset into the log, which
// moves with every timestamp's length), wherever it is handed back.
var cursorField = regexp.MustCompile(`("(?:cursor|before)": ")([0-9a-z]+)(")`)

func (z *normalizer) apply(s string) string {
	for i := 0; i+1 < len(z.fixed); i += 2 {
		s = strings.ReplaceAll(s, z.fixed[i], z.fixed[i+1])
	}
	s = cursorField.ReplaceAllStringFunc(s, func(m string) string {
		p := cursorField.FindStringSubmatch(m)
		key := "cursor " + p[2]
		if _, ok := z.seen[key]; !ok {
			z.n["cursor"]++
			z.seen[key] = fmt.Sprintf("h2vb%d", z.n["cursor"])
		}
		return p[1] + z.seen[key] + p[3]
	})
	for i, v := range volatile {
		s = v.re.ReplaceAllStringFunc(s, func(old string) string {
			if host, port, ok := strings.Cut(old, "%3A"); ok && v.name == nil {
				return host + "%3A" + z.port(port)
			}
			if host, port, ok := strings.Cut(old, ":"); ok && v.name == nil {
				return host + ":" + z.port(port)
			}
			if v.name == nil {
				k, _, _ := strings.Cut(old, "=")
				return k + "=" + k + "-1"
			}
			key := fmt.Sprint(i, old)
			if nv, ok := z.seen[key]; ok {
				return nv
			}
			z.n[fmt.Sprint(i)]++
			nv := v.name(z.n[fmt.Sprint(i)])
			z.seen[key] = nv
			return nv
		})
	}
	return s
}

// port maps a loopback port to a fixed one, the same wherever it appears.
func (z *normalizer) port(p string) string {
	key := "port " + p
	if nv, ok := z.seen[key]; ok {
		return nv
	}
	z.n["port"]++
	nv := fmt.Sprint(8930 + z.n["port"])
	z.seen[key] = nv
	return nv
}

// fileName is where a method's frames live: "/" becomes "_", "$" is left
// out ($/cancelRequest is _cancelRequest.json).
func fileName(method string) string {
	return strings.ReplaceAll(strings.ReplaceAll(method, "$", ""), "/", "_") + ".json"
}

// write renumbers each file's JSON-RPC ids from 1, normalises, and checks
// (or with -update writes) every file of testdata/golden.
func (r *recorder) write(z *normalizer) {
	r.t.Helper()
	dir := filepath.Join("testdata", "golden")
	methods := make([]string, 0, len(r.frames))
	for m := range r.frames {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	// Normalise in one pass over everything, in a fixed order, so that a
	// session id is the same value in every file.
	// Each file's requests are numbered from 1; a $/cancelRequest names
	// the cancelled request by its number in its own file.
	renumbered := map[int64]int64{}
	files := map[string]*goldenFile{}
	for _, m := range methods {
		f := &goldenFile{Method: m}
		files[m] = f
		ids := map[int64]int64{}
		for _, raw := range r.frames[m] {
			var fr map[string]json.RawMessage
			_ = json.Unmarshal(raw, &fr)
			if idRaw, ok := fr["id"]; ok {
				var id int64
				_ = json.Unmarshal(idRaw, &id)
				if _, ok := ids[id]; !ok {
					ids[id] = int64(len(ids) + 1)
					renumbered[id] = ids[id]
				}
				raw = bytes.Replace(raw, []byte(fmt.Sprintf(`"id":%d`, id)), []byte(fmt.Sprintf(`"id":%d`, ids[id])), 1)
			}
			f.Frames = append(f.Frames, raw)
		}
	}
	if f := files["$/cancelRequest"]; f != nil {
		for i, raw := range f.Frames {
			var fr struct {
				Params struct {
					ID int64 `json:"id"`
				} `json:"params"`
			}
			if json.Unmarshal(raw, &fr) == nil && renumbered[fr.Params.ID] != 0 {
				f.Frames[i] = bytes.Replace(raw, []byte(fmt.Sprintf(`"id":%d`, fr.Params.ID)), []byte(fmt.Sprintf(`"id":%d`, renumbered[fr.Params.ID])), 1)
			}
		}
	}
	var all bytes.Buffer
	for _, m := range methods {
		f := files[m]
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(f); err != nil {
			r.t.Fatal(err)
		}
		all.WriteString(fileName(m) + "\x00" + strings.TrimSuffix(b.String(), "\n") + "\x00")
	}
	parts := strings.Split(z.apply(all.String()), "\x00")
	want := map[string]bool{}
	for i := 0; i+1 < len(parts); i += 2 {
		name, body := parts[i], parts[i+1]+"\n"
		want[name] = true
		if !json.Valid([]byte(body)) {
			r.t.Fatalf("%s: normalising broke the JSON:\n%s", name, body)
		}
		path := filepath.Join(dir, name)
		if *update {
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				r.t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil {
			r.t.Errorf("%v (run go test ./rpc -run Golden -update)", err)
			continue
		}
		if string(old) != body {
			r.t.Errorf("%s changed; if deliberate, run go test ./rpc -run Golden -update, review the diff and update PROTOCOL.md.\ngot:\n%s", name, body)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !want[e.Name()] {
			if *update {
				_ = os.Remove(filepath.Join(dir, e.Name()))
			} else {
				r.t.Errorf("%s is no longer produced", e.Name())
			}
		}
	}
}
