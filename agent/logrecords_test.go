package agent

import "github.com/kin-dev/kin/agent/session"

// logRecords reads every record of a session's log as it is on disk now
// (whoever owns it), for a test to look at what was recorded.
func logRecords(st *session.Store, id string) ([]session.Record, error) {
	rd, err := st.Reader(id)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var recs []session.Record
	err = rd.Each(-1, func(r session.Record, _ int64) error {
		recs = append(recs, r)
		return nil
	})
	return recs, err
}
