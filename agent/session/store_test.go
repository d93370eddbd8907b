package session_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kin-dev/kin/agent/session"
)

func TestListFollowsAppendsAndSkipsForeignFiles(t *testing.T) {
	dir := t.TempDir()
	st := session.NewStore(dir)
	info, log, err := st.Create("first")
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a session"), 0o600)
	os.WriteFile(filepath.Join(dir, "s_empty.jsonl"), nil, 0o600)
	list, _ := st.List()
	if len(list) != 1 || list[0].Turns != 0 || list[0].Title != "first" {
		t.Fatalf("list %+v", list)
	}
	log.Append(session.Record{Type: session.TypeTurn, TurnID: "t_1", Status: "completed"})
	log.Append(session.Record{Type: session.TypeTitle, Title: "renamed"})
	list, _ = st.List()
	if list[0].Turns != 1 || list[0].Title != "renamed" || list[0].SessionID != info.SessionID {
		t.Errorf("after appends: %+v", list)
	}
	if _, err := st.Read("../../etc/passwd"); err == nil {
		t.Error("a path was accepted as a session id")
	}
}

func BenchmarkList200Sessions(b *testing.B) {
	dir := b.TempDir()
	st := session.NewStore(dir)
	for i := 0; i < 200; i++ {
		_, log, _ := st.Create("s")
		for j := 0; j < 200; j++ {
			log.Append(session.Record{Type: session.TypeAssist, Text: "some answer text that takes room in the log"})
		}
		log.Close()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if list, _ := st.List(); len(list) != 200 {
			b.Fatal(len(list))
		}
	}
}
