package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/session"
)

// A subagent's session names its parent in its first record; the index
// keeps the parent (an eighth field a kin that knows seven skips), a row an
// older kin writes again keeps it, and a rebuilt index finds it in the log.
func TestChildSessionsAreListedUnderTheirParent(t *testing.T) {
	dir := t.TempDir()
	st := session.NewStore(dir)
	parent, plog, err := st.Create("parent", []string{"/w/app"}, "agent", "")
	if err != nil {
		t.Fatal(err)
	}
	defer plog.Close()
	lin := session.Lineage{SessionID: parent.SessionID, TurnID: "t_1", CallID: "call_d", Depth: 1}
	child, clog, err := st.CreateChild("look around", []string{"/w/app"}, "ask", lin)
	if err != nil {
		t.Fatal(err)
	}
	defer clog.Close()
	if child.ParentID != parent.SessionID {
		t.Fatalf("child %+v", child)
	}
	check := func(where string, st *session.Store) {
		t.Helper()
		kids, err := st.Children(parent.SessionID)
		if err != nil || len(kids) != 1 || kids[0].SessionID != child.SessionID || kids[0].ParentID != parent.SessionID {
			t.Errorf("%s: children %+v %v", where, kids, err)
		}
		if none, _ := st.Children(child.SessionID); len(none) != 0 {
			t.Errorf("%s: the child has children %+v", where, none)
		}
	}
	check("this kin", st)
	check("another kin", session.NewStore(dir))

	// An older kin writes the child's row again, without a parent.
	journal := filepath.Join(dir, "index.tsv")
	b, _ := os.ReadFile(journal)
	var row string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "r\t"+child.SessionID+"\t") {
			f := strings.Split(l, "\t")
			if len(f) != 8 || f[7] != parent.SessionID {
				t.Fatalf("the child's row: %q", l)
			}
			row = strings.Join(f[:7], "\t")
		}
	}
	f, _ := os.OpenFile(journal, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(row + "\n")
	f.Close()
	check("after an older kin's row", session.NewStore(dir))

	// Without the index, the logs say it.
	os.Remove(journal)
	check("rebuilt", session.NewStore(dir))
	v, err := st.View(child.SessionID, session.Query{})
	if err != nil || v.Parent() == nil || *v.Parent() != lin {
		t.Errorf("the child's view: %+v %v", v.Parent(), err)
	}
}
