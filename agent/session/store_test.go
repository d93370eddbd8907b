package session_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
)

func TestListFollowsAppendsAndSkipsForeignFiles(t *testing.T) {
	dir := t.TempDir()
	st := session.NewStore(dir)
	info, log, err := st.Create("first", []string{"/w/app", "/w/lib"}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a session"), 0o600)
	os.WriteFile(filepath.Join(dir, "s_empty.jsonl"), nil, 0o600)
	list, _ := st.List()
	if len(list) != 1 || list[0].Turns != 0 || list[0].Title != "first" || list[0].Cwd != "/w/app" ||
		len(list[0].AdditionalDirectories) != 1 || list[0].AdditionalDirectories[0] != "/w/lib" {
		t.Fatalf("list %+v", list)
	}
	log.Append(session.Record{Type: session.TypeTurn, TurnID: "t_1", Status: "completed"})
	log.Append(session.Record{Type: session.TypeTitle, Title: "renamed"})
	list, _ = st.List()
	if list[0].Turns != 1 || list[0].Title != "renamed" || list[0].SessionID != info.SessionID {
		t.Errorf("after appends: %+v", list)
	}
	// Another kin (a second Store on the folder) sees the same.
	other, _ := session.NewStore(dir).List()
	if len(other) != 1 || other[0].Turns != 1 || other[0].Title != "renamed" {
		t.Errorf("a second reader: %+v", other)
	}
	if _, err := st.View("../../etc/passwd", session.Query{}); err == nil {
		t.Error("a path was accepted as a session id")
	}
}

// The index is what session/list reads: with it in place no log is read,
// and it is rebuilt from the logs when it is missing or the folder changed
// behind its back.
func TestListReadsTheIndexAndRebuildsItFromTheLogs(t *testing.T) {
	dir := t.TempDir()
	st := session.NewStore(dir)
	var ids []string
	for i := 0; i < 3; i++ {
		info, log, err := st.Create(fmt.Sprintf("s%d", i), nil, "", "")
		if err != nil {
			t.Fatal(err)
		}
		log.Append(session.Record{Type: session.TypeTurn, TurnID: "t", Status: "completed"})
		log.Close()
		ids = append(ids, info.SessionID)
	}
	if list, _ := st.List(); len(list) != 3 {
		t.Fatalf("list %+v", list)
	}
	// A log overwritten behind kin's back is not read: its row comes from
	// the index.
	os.WriteFile(filepath.Join(dir, ids[0]+".jsonl"), []byte(`{"type":"session","title":"changed behind kin's back"}`+"\n"), 0o600)
	list, _ := session.NewStore(dir).List()
	if len(list) != 3 || titleOf(list, ids[0]) != "s0" {
		t.Errorf("the first list of a new reader read a log: %+v", list)
	}
	// A log that appears without an index line (copied in, an older kin)
	// is found from the folder's change; one removed by hand goes.
	copied := `{"type":"session","time":"2026-01-01T00:00:00Z","sessionId":"s_copied","title":"copied in"}` + "\n"
	os.WriteFile(filepath.Join(dir, "s_copied.jsonl"), []byte(copied), 0o600)
	os.Remove(filepath.Join(dir, ids[1]+".jsonl"))
	list, _ = session.NewStore(dir).List()
	if len(list) != 3 || titleOf(list, "s_copied") != "copied in" || titleOf(list, ids[1]) != "" {
		t.Errorf("after a copy and a removal: %+v", list)
	}
	// Without the index, everything comes back from the logs.
	os.Remove(filepath.Join(dir, "index.tsv"))
	list, _ = session.NewStore(dir).List()
	if len(list) != 3 || titleOf(list, ids[0]) != "changed behind kin's back" || list[0].SessionID != ids[2] {
		t.Errorf("rebuilt: %+v", list)
	}
	for _, i := range list {
		if i.SessionID == ids[2] && i.Turns != 1 {
			t.Errorf("rebuilt turns: %+v", i)
		}
	}
	if err := st.Delete(ids[2]); err != nil {
		t.Fatal(err)
	}
	if list, _ := st.List(); len(list) != 2 || titleOf(list, ids[2]) != "" {
		t.Errorf("after delete: %+v", list)
	}
}

func titleOf(list []session.Info, id string) string {
	for _, i := range list {
		if i.SessionID == id {
			return i.Title
		}
	}
	return ""
}

// Records kin writes stay readable: a 17 MiB title, question or answer is
// cut with a marker, and a line longer than the reader takes (written by
// something else) is skipped, never an error.
func TestLongRecordsAreCutAndLongLinesSkipped(t *testing.T) {
	dir := t.TempDir()
	st := session.NewStore(dir)
	huge := strings.Repeat("é", 17<<19) // 17 MiB
	info, log, err := st.Create(huge, nil, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := log.Append(session.Record{Type: session.TypeUser, TurnID: "t1", Text: huge}); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 20<<20)
	if _, _, err := log.Append(session.Record{Type: session.TypeResult, TurnID: "t1", CallID: "c", Output: "o",
		Content: []tool.Content{{Type: "text", Text: big}, {Type: "terminal", Text: big}}}); err != nil {
		t.Fatal(err)
	}
	log.Close()
	p := filepath.Join(dir, info.SessionID+".jsonl")
	f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"type":"assistant","text":"` + strings.Repeat("y", 65<<20) + "\"}\n")
	f.WriteString(`{"type":"turn","turnId":"t1","status":"completed"}` + "\n")
	f.Close()

	recs, skipped, err := session.ReadRecords(p)
	if err != nil || skipped != 1 || len(recs) != 4 {
		t.Fatalf("read %d records, skipped %d, err %v", len(recs), skipped, err)
	}
	for _, r := range recs[:3] {
		if len(r.Title) > session.MaxTitle+64 || len(r.Text) > session.MaxText+64 {
			t.Errorf("%s record not cut: title %d text %d", r.Type, len(r.Title), len(r.Text))
		}
	}
	if !strings.Contains(recs[0].Title, "more bytes were not recorded") || !strings.Contains(recs[1].Text, "more bytes were not recorded") {
		t.Error("no marker says what was cut")
	}
	os.Remove(filepath.Join(dir, "index.tsv")) // so the list reads the log
	list, err := session.NewStore(dir).List()
	if err != nil || len(list) != 1 || list[0].Turns != 1 {
		t.Fatalf("list %+v %v", list, err)
	}
	v, err := st.View(info.SessionID, session.Query{Limit: 10})
	if err != nil || v.Skipped != 1 || len(v.Page().Items) != 2 {
		t.Fatalf("view: %v %+v", err, v)
	}
	if _, err := st.Open(info.SessionID); err != nil {
		t.Fatalf("open: %v", err)
	}
}

// A line a crash cut off is removed before the next record, so it never
// runs into it; a whole record that only lost its newline is kept.
func TestOpenRepairsAnUnfinishedLastLine(t *testing.T) {
	dir := t.TempDir()
	st := session.NewStore(dir)
	info, log, _ := st.Create("x", nil, "", "")
	log.Close()
	p := filepath.Join(dir, info.SessionID+".jsonl")
	f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"type":"user","turnId":"t1","text":"cut mid-wr`)
	f.Close()
	log, err := st.Open(info.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	log.Append(session.Record{Type: session.TypeUser, TurnID: "t2", Text: "next"})
	log.Close()
	f, _ = os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"type":"user","turnId":"t3","text":"whole but no newline"}`)
	f.Close()
	log, _ = st.Open(info.SessionID)
	log.Append(session.Record{Type: session.TypeUser, TurnID: "t4", Text: "last"})
	log.Close()
	recs, skipped, _ := session.ReadRecords(p)
	var turns []string
	for _, r := range recs {
		turns = append(turns, r.TurnID)
	}
	if skipped != 0 || strings.Join(turns, ",") != ",t2,t3,t4" {
		t.Errorf("records %q, skipped %d", turns, skipped)
	}
}

// One owner at a time, also inside one process; a delete waits for the
// owner to let go.
func TestOneOwnerAtATime(t *testing.T) {
	dir := t.TempDir()
	st := session.NewStore(dir)
	info, log, _ := st.Create("x", nil, "", "")
	if _, err := session.NewStore(dir).Open(info.SessionID); !errors.Is(err, session.ErrOwned) {
		t.Fatalf("second open: %v", err)
	}
	if err := session.NewStore(dir).Delete(info.SessionID); !errors.Is(err, session.ErrOwned) {
		t.Fatalf("delete by a non-owner: %v", err)
	}
	if _, err := st.View(info.SessionID, session.Query{Limit: 1}); err != nil {
		t.Fatalf("a non-owner cannot read: %v", err)
	}
	log.Close()
	other, err := session.NewStore(dir).Open(info.SessionID)
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	other.Close()
}

func TestPagesNewestFirstWithACursor(t *testing.T) {
	st := session.NewStore(t.TempDir())
	info, log, _ := st.Create("x", nil, "", "")
	for i := 0; i < 5; i++ {
		turn := fmt.Sprintf("t%d", i)
		log.Append(session.Record{Type: session.TypeUser, TurnID: turn, Text: fmt.Sprintf("q%d", i)})
		log.Append(session.Record{Type: session.TypeAssist, TurnID: turn, Text: "a"})
		log.Append(session.Record{Type: session.TypeAssist, TurnID: turn, Text: fmt.Sprint(i), Cont: true})
		log.Append(session.Record{Type: session.TypeCall, TurnID: turn, CallID: "c" + turn, Name: "bash"})
		log.Append(session.Record{Type: session.TypeTurn, TurnID: turn, Status: "completed"}) // before the result, on purpose
		log.Append(session.Record{Type: session.TypeResult, TurnID: turn, CallID: "c" + turn, Status: "completed", Output: "out" + turn})
	}
	log.Close()
	var pages [][]string
	cursor := ""
	for {
		v, err := st.View(info.SessionID, session.Query{Limit: 3, Before: cursor})
		if err != nil {
			t.Fatal(err)
		}
		p := v.Page()
		var got []string
		for _, it := range p.Items {
			switch it.Type {
			case "toolCall":
				got = append(got, it.Status+":"+it.Output)
			default:
				got = append(got, it.Type+":"+it.Text)
			}
		}
		pages = append(pages, got)
		if p.Cursor == "" {
			break
		}
		cursor = p.Cursor
	}
	// A call's result may come after the page's end (here after its turn's
	// record): it is still merged into the call.
	want := "[[assistant:a4 completed:outt4 turn:] [completed:outt3 turn: user:q4] [turn: user:q3 assistant:a3] " +
		"[user:q2 assistant:a2 completed:outt2] [assistant:a1 completed:outt1 turn:] [completed:outt0 turn: user:q1] [user:q0 assistant:a0]]"
	if fmt.Sprint(pages) != want {
		t.Errorf("pages\n got %v\nwant %s", pages, want)
	}
	if _, err := st.View(info.SessionID, session.Query{Limit: 3, Before: "nonsense"}); !errors.Is(err, session.ErrBadCursor) {
		t.Errorf("bad cursor: %v", err)
	}
}

// What a stopped kin left open is closed by the next owner: an allowed call
// may have run (unknown), a call never allowed did not (failed), and the
// turn ends failed, keeping the text that had streamed.
func TestRepairsCloseWhatAStoppedKinLeftOpen(t *testing.T) {
	st := session.NewStore(t.TempDir())
	info, log, _ := st.Create("x", nil, "", "")
	for _, r := range []session.Record{
		{Type: session.TypeUser, TurnID: "t1", Text: "q"},
		{Type: session.TypeTurn, TurnID: "t1", Status: "completed"},
		{Type: session.TypeUser, TurnID: "t2", Text: "deploy"},
		{Type: session.TypeAssist, TurnID: "t2", Text: "Deploy"},
		{Type: session.TypeAssist, TurnID: "t2", Text: "ing now", Cont: true},
		{Type: session.TypeCall, TurnID: "t2", CallID: "ran", Name: "bash"},
		{Type: session.TypeDecision, TurnID: "t2", CallID: "ran", Decision: "allow_once"},
		{Type: session.TypeCall, TurnID: "t2", CallID: "asked", Name: "write_file"},
	} {
		log.Append(r)
	}
	log.Close()
	v, _ := st.View(info.SessionID, session.Query{Limit: 10})
	if v.OpenTurn() != "t2" {
		t.Errorf("open turn %q", v.OpenTurn())
	}
	var got []string
	for _, r := range v.Repairs() {
		got = append(got, r.Type+":"+r.CallID+":"+r.Status)
	}
	if strings.Join(got, ",") != "toolResult:ran:unknown,toolResult:asked:failed,turn::failed" {
		t.Errorf("repairs %v", got)
	}
	if p := v.Page(); p.Items[3].Text != "Deploying now" {
		t.Errorf("streamed text %+v", p.Items[3])
	}
}

// A model may give a call the id of one in an earlier turn (mock services
// and some local ones do): the call left open is closed once, not once per
// time its id was used.
func TestRepairsCloseACallWhoseIDCameAgainOnce(t *testing.T) {
	st := session.NewStore(t.TempDir())
	info, log, _ := st.Create("x", nil, "", "")
	for _, r := range []session.Record{
		{Type: session.TypeUser, TurnID: "t1", Text: "slow"},
		{Type: session.TypeCall, TurnID: "t1", CallID: "call_slow", Name: "bash"},
		{Type: session.TypeDecision, TurnID: "t1", CallID: "call_slow", Decision: "allow_once"},
		{Type: session.TypeResult, TurnID: "t1", CallID: "call_slow", Name: "bash", Status: "failed"},
		{Type: session.TypeTurn, TurnID: "t1", Status: "cancelled"},
		{Type: session.TypeUser, TurnID: "t2", Text: "slow again"},
		{Type: session.TypeCall, TurnID: "t2", CallID: "call_slow", Name: "bash"},
		{Type: session.TypeDecision, TurnID: "t2", CallID: "call_slow", Decision: "allow_once"},
	} {
		log.Append(r)
	}
	log.Close()
	v, _ := st.View(info.SessionID, session.Query{Limit: 10})
	var got []string
	for _, r := range v.Repairs() {
		got = append(got, r.Type+":"+r.TurnID+":"+r.CallID+":"+r.Status)
	}
	if strings.Join(got, ",") != "toolResult:t2:call_slow:unknown,turn:t2::failed" {
		t.Errorf("repairs %v", got)
	}
}

// A session's origin (what made it, when not a person at an editor) is
// kept in its log and in the index, as a line of its own: this kin reads an
// older index (rows without an origin), an index rebuilt from the logs
// keeps it, and the row line an older kin reads is the same as before.
func TestOriginIsKeptAndOlderIndexesStillRead(t *testing.T) {
	dir := t.TempDir()
	// An index an older kin wrote: header, one row, the folder's mtime.
	older := session.NewStore(dir)
	oldInfo, oldLog, err := older.Create("by a person", []string{"/w"}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	oldLog.Close()
	st := session.NewStore(dir)
	info, log, err := st.Create("piped", []string{"/w"}, "", "chat-piped")
	if err != nil {
		t.Fatal(err)
	}
	log.Close()
	origins := func(list []session.Info) map[string]string {
		out := map[string]string{}
		for _, i := range list {
			out[i.SessionID] = i.Origin
		}
		return out
	}
	for name, s := range map[string]*session.Store{"the writer": st, "another kin": session.NewStore(dir)} {
		list, err := s.List()
		if err != nil {
			t.Fatal(err)
		}
		if o := origins(list); len(o) != 2 || o[info.SessionID] != "chat-piped" || o[oldInfo.SessionID] != "" {
			t.Errorf("%s lists origins %v", name, o)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "index.tsv"))
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "r\t"+info.SessionID) && strings.Count(line, "\t") != 6 {
			t.Errorf("the row line changed shape (older kins read 7 fields): %q", line)
		}
	}
	if !strings.Contains(string(b), "o\t"+info.SessionID+"\t\"chat-piped\"\n") {
		t.Errorf("no origin line in the index:\n%s", b)
	}
	// Rebuilt from the logs.
	os.Remove(filepath.Join(dir, "index.tsv"))
	list, _ := session.NewStore(dir).List()
	if o := origins(list); o[info.SessionID] != "chat-piped" {
		t.Errorf("rebuilt origins %v", o)
	}
	if _, _, err := st.Create("x", nil, "", "Bad Origin!"); err == nil {
		t.Error("an origin that is not a short name was taken")
	}
}

// An allowed call with a task record is left open for an owner that
// follows tasks (and named with its task), and closed unknown, naming the
// task, for one that does not (a subagent's session).
func TestRepairsFollowingKeepTasksOpen(t *testing.T) {
	st := session.NewStore(t.TempDir())
	info, log, _ := st.Create("x", nil, "", "")
	for _, r := range []session.Record{
		{Type: session.TypeUser, TurnID: "t1", Text: "job"},
		{Type: session.TypeCall, TurnID: "t1", CallID: "j1", Name: "mcp__jobs__job"},
		{Type: session.TypeDecision, TurnID: "t1", CallID: "j1", Decision: "allow_once"},
		{Type: session.TypeTask, TurnID: "t1", CallID: "j1", Server: "jobs", TaskID: "task-7f3a"},
		{Type: session.TypeCall, TurnID: "t1", CallID: "c2", Name: "bash"},
		{Type: session.TypeDecision, TurnID: "t1", CallID: "c2", Decision: "allow_once"},
	} {
		log.Append(r)
	}
	log.Close()
	v, _ := st.View(info.SessionID, session.Query{Limit: 10})
	repairs, tasks := v.RepairsFollowing()
	var got []string
	for _, r := range repairs {
		got = append(got, r.Type+":"+r.CallID+":"+r.Status)
	}
	if strings.Join(got, ",") != "toolResult:c2:unknown,turn::failed" {
		t.Errorf("repairs %v", got)
	}
	if len(tasks) != 1 || tasks[0] != (session.OpenTask{TurnID: "t1", CallID: "j1", Name: "mcp__jobs__job", Server: "jobs", TaskID: "task-7f3a"}) {
		t.Errorf("tasks %+v", tasks)
	}
	if p := v.Page(); p.Items[1].Status != "working" {
		t.Errorf("history %+v", p.Items[1])
	}
	all := v.Repairs()
	if all[0].CallID != "j1" || all[0].Status != "unknown" || !strings.Contains(all[0].Output, "task task-7f3a on MCP server jobs") {
		t.Errorf("without following: %+v", all[0])
	}
}

// A crash or a power cut may leave the index's last line torn: the next
// kin's lines start a line of their own, so what they say (a turn ended)
// is read, not dropped with the tear.
func TestAnIndexLineTornByACrashTakesNoLaterLineWithIt(t *testing.T) {
	dir := t.TempDir()
	st := session.NewStore(dir)
	info, log, err := st.Create("a session", nil, "", "")
	if err != nil {
		t.Fatal(err)
	}
	log.Close()
	session.NewStore(dir).List() // the index notes the folder as it is
	f, err := os.OpenFile(filepath.Join(dir, "index.tsv"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("r\ts_torn\t2026-") // kin killed mid-line
	f.Close()
	log, err = session.NewStore(dir).Open(info.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	log.Append(session.Record{Type: session.TypeTurn, TurnID: "t", Status: "completed"})
	log.Close()
	list, err := session.NewStore(dir).List()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range list {
		if i.SessionID == info.SessionID && i.Turns == 1 {
			return
		}
	}
	t.Fatalf("the turn that ended after the torn line is not in the list: %+v", list)
}
