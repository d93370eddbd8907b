package main_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/gitx/gitxtest"
	"github.com/kin-dev/kin/agent/modeltest"
)

const reviewedCalc = "package calc\n\n// Sum adds the numbers.\nfunc Sum(xs []int) int {\n\tt := 0\n\tfor _, x := range xs {\n\t\tt += x\n\t}\n\treturn t\n}\n"

// The built kin serve reviews a real repository's uncommitted change with
// a planted bug (Sum skips the first element, line 6): the scripted model
// reports it through report_finding, review/finding arrives on the right
// line before turn/completed, the turn ran in ask mode with the diff framed
// as the repository's, session/resume returns the finding, /review does
// the same, and the repository's planted programs never ran.
func TestBinaryReviewFindsThePlantedBug(t *testing.T) {
	repo := gitxtest.Repo(t, filepath.Join(t.TempDir(), "repo"), map[string]string{"calc.go": reviewedCalc})
	repo, _ = filepath.EvalSymlinks(repo)
	ran := gitxtest.Hostile(t, repo)
	gitxtest.Write(t, repo, "calc.go", strings.Replace(reviewedCalc, "range xs", "range xs[1:]", 1))

	m := modeltest.New()
	defer m.Close()
	finding := modeltest.Call{ID: "call_f1", Name: "report_finding",
		Arguments: `{"file":"calc.go","startLine":6,"endLine":6,"severity":"error","title":"Sum skips the first element","body":"range xs[1:] drops xs[0]."}`}
	m.Route(modeltest.FirstUser("Review the uncommitted changes"),
		modeltest.Reply{Calls: []modeltest.Call{finding}},
		modeltest.Reply{Text: []string{"One finding."}},
		modeltest.Reply{Calls: []modeltest.Call{finding}},
		modeltest.Reply{Text: []string{"Again one finding."}})
	home := t.TempDir()
	p := initialized(t, home, m)
	p.send(req(2, "session/new", map[string]any{"cwd": repo}))
	sid := result(t, p.until(idIs(2)))["session"].(map[string]any)["sessionId"].(string)

	// Clear errors first: a bad target, an unknown base, an unknown commit.
	for i, target := range []map[string]any{{}, {"base": "--output=/tmp/x"}, {"base": "nosuch"}, {"commit": "deadbeef"}} {
		p.send(req(10+i, "review/start", map[string]any{"sessionId": sid, "target": target}))
		got := p.until(idIs(float64(10 + i)))
		e, _ := got["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32602) {
			t.Fatalf("review/start %v: %v", target, got)
		}
	}

	p.send(req(3, "review/start", map[string]any{"sessionId": sid, "target": map[string]any{"uncommitted": true}}))
	res := result(t, p.until(idIs(3)))
	tid := res["turnId"].(string)
	if res["root"] != repo || len(res["files"].([]any)) != 1 {
		t.Fatalf("review/start: %v", res)
	}
	f := p.until(method("review/finding"))["params"].(map[string]any)
	rng := f["range"].(map[string]any)
	if f["turnId"] != tid || f["file"] != filepath.Join(repo, "calc.go") || rng["start"].(map[string]any)["line"] != float64(5) || f["severity"] != "error" {
		t.Fatalf("finding: %v", f)
	}
	done := p.until(method("turn/completed"))["params"].(map[string]any)
	if done["turnId"] != tid || done["status"] != "completed" {
		t.Fatalf("turn: %v", done)
	}

	reqs := m.Requests()
	first := reqs[len(reqs)-2]
	body := string(first.Raw)
	if !strings.Contains(body, `range xs[1:]`) || !strings.Contains(body, `untrusted-git-diff server=`) {
		t.Errorf("the model was not sent the framed diff: %.600s", body)
	}
	if !strings.Contains(first.Instructions, "This turn is a code review") || !strings.Contains(first.Instructions, "ask mode") {
		t.Errorf("instructions: %.300s", first.Instructions)
	}
	var names []string
	for _, tl := range first.Tools {
		n, _ := tl["name"].(string)
		names = append(names, n)
	}
	tools := strings.Join(names, ",")
	if !strings.Contains(tools, "report_finding") || strings.Contains(tools, "write_file") || strings.Contains(tools, "bash") {
		t.Errorf("tools offered to a review: %s", tools)
	}

	p.send(req(4, "session/resume", map[string]any{"sessionId": sid}))
	fs, _ := result(t, p.until(idIs(4)))["findings"].([]any)
	if len(fs) != 1 || fs[0].(map[string]any)["title"] != "Sum skips the first element" {
		t.Fatalf("resume findings: %v", fs)
	}

	// /review from any front end: the same review, as a command.
	p.send(req(5, "turn/start", map[string]any{"sessionId": sid, "input": "/review"}))
	c := result(t, p.until(idIs(5)))
	cmd, _ := c["command"].(map[string]any)
	if cmd == nil || cmd["name"] != "review" || c["turnId"] == nil {
		t.Fatalf("/review: %v", c)
	}
	p.until(method("review/finding"))
	p.until(method("turn/completed"))
	p.send(req(6, "session/resume", map[string]any{"sessionId": sid}))
	fs, _ = result(t, p.until(idIs(6)))["findings"].([]any)
	if len(fs) != 2 {
		b, _ := json.Marshal(fs)
		t.Fatalf("findings after /review: %s", b)
	}
	if got := gitxtest.Ran(t, ran); len(got) > 0 {
		t.Fatalf("the repository's programs ran: %v", got)
	}
	gitxtest.Control(t, repo, ran)
}
