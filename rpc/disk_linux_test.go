//go:build linux

package rpc_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kin-dev/kin/agent/disktest"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// A full disk fails the turn, saying so, instead of completing it with
// nothing saved; nothing runs or is sent once the session cannot be
// written, and once space is back the log goes on whole.
func TestAFullDiskFailsTheTurnAndTheLogStaysWhole(t *testing.T) {
	e := newEnv(t)
	e.Home = disktest.Small(t, "1m")
	hold := make(chan struct{})
	e.Model.Script(modeltest.Reply{Text: []string{"first words ", strings.Repeat("more ", 20<<10)}, Hold: hold})
	ed, sid := e.editor()

	// The disk fills up while the answer streams.
	t1 := start(t, ed, sid, "a long answer")
	ed.Wait("turn/delta", rpctest.Field("turnId", t1))
	free := disktest.Fill(t, e.Home, "filler")
	close(hold)
	done := completed(ed, t1)
	if done["status"] != "failed" || !strings.Contains(done["error"].(string), "no space left on device") {
		t.Fatalf("turn on a full disk: %v %q", done["status"], done["error"])
	}
	if n := ed.Wait("notice", rpctest.Field("level", "error")); !strings.Contains(n["message"].(string), "no space left on device") || n["sessionId"] != sid {
		t.Errorf("notice %v", n)
	}
	// Full again (cutting off the half-written line freed a little; a long
	// question does not fit what is left of the log's last page): the next
	// question is not sent to the model at all.
	free2 := disktest.Fill(t, e.Home, "filler2")
	asked := len(e.Model.Requests())
	t2 := start(t, ed, sid, "still full? "+strings.Repeat("(more than fits in a page) ", 1<<10))
	if done := completed(ed, t2); done["status"] != "failed" || !strings.Contains(done["error"].(string), "no space left on device") {
		t.Errorf("second turn: %v", done)
	}
	if len(e.Model.Requests()) != asked {
		t.Error("a question kin could not record was sent to the model")
	}

	free()
	free2()
	e.Model.Script(modeltest.Reply{Text: []string{"saved"}})
	t3 := start(t, ed, sid, "space is back")
	if done := completed(ed, t3); done["status"] != "completed" {
		t.Fatalf("after freeing space: %v", done)
	}
	recs, skipped, err := session.ReadRecords(filepath.Join(e.Home, "sessions", sid+".jsonl"))
	if err != nil || skipped != 0 {
		t.Fatalf("the log has %d unreadable lines (%v)", skipped, err)
	}
	var ends []string
	for _, r := range recs {
		if r.Type == session.TypeTurn {
			ends = append(ends, r.TurnID+":"+r.Status)
		}
	}
	if strings.Join(ends, ",") != t1+":failed,"+t2+":failed,"+t3+":completed" {
		t.Errorf("turn ends on record: %v", ends)
	}
}

// A read-only KIN_HOME still shows its sessions; turns are refused, saying
// why.
func TestAReadOnlyHomeStillShowsHistory(t *testing.T) {
	e := newEnv(t)
	e.Home = disktest.Small(t, "1m")
	e.Model.Script(modeltest.Reply{Text: []string{"answer"}})
	ed, sid := e.editor()
	completed(ed, start(t, ed, sid, "a question"))
	ed.Conn.Close()
	<-ed.Done
	if err := syscall.Mount("", e.Home, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount read-only: %v", err)
	}

	ed2 := rpctest.Start(t, e.Options())
	ed2.Initialize(e.WS)
	var list rpc.SessionListResult
	ed2.MustCall("session/list", nil, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].Turns != 1 {
		t.Fatalf("list %+v", list.Sessions)
	}
	var res rpc.SessionResumeResult
	ed2.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, &res)
	if len(res.History) != 3 || res.History[1].Text != "answer" || !res.ReadOnly || !strings.Contains(res.ReadOnlyReason, "cannot be written") {
		t.Errorf("resume on a read-only home: %+v", res)
	}
	if code, msg := ed2.CallErr("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "more"}); code != rpc.CodeBusy || !strings.Contains(msg, "cannot be written") {
		t.Errorf("turn/start: %d %q", code, msg)
	}
}

// A rollback kin cannot record (the disk is full) puts the files back and
// says which, in the one error turn/rollback answers: it said "put back as
// reported", with nothing reported.
func TestARollbackKinCannotRecordNamesTheFilesPutBack(t *testing.T) {
	e := newEnv(t)
	e.Home = disktest.Small(t, "1m")
	// enough files that the rollback's record needs a page the full disk
	// no longer has
	var calls []modeltest.Call
	var paths []string
	for i := range 40 {
		name := fmt.Sprintf("file-%02d-%s.txt", i, strings.Repeat("n", 100))
		paths = append(paths, e.Write(name, "old\n"))
		calls = append(calls, modeltest.Call{ID: fmt.Sprintf("e%d", i), Name: "write_file", Arguments: args(map[string]any{"path": name, "content": "new\n"})})
	}
	e.Model.Script(modeltest.Reply{Calls: calls}, modeltest.Reply{Text: []string{"changed"}})
	ed, sid := e.editor()
	answerApprovals(ed, func(map[string]any) string { return "allow_once" })
	completed(ed, start(t, ed, sid, "change the files"))
	free := disktest.Fill(t, e.Home, "filler")
	defer free()
	_, msg := ed.CallErr("turn/rollback", rpc.TurnRollbackParams{SessionID: sid, Turns: 1})
	if !strings.Contains(msg, "kin put back 40 files ("+paths[0]+", ") || !strings.Contains(msg, "… and 30 more") ||
		!strings.Contains(msg, "no space left on device") {
		t.Fatalf("turn/rollback on a full disk answered %q", msg)
	}
}
