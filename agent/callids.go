package agent

import (
	"crypto/rand"
	"fmt"

	"github.com/kin-dev/kin/agent/model"
)

// uniqueCalls gives each call of an answer an id that no other call of the
// session has, before anything is recorded, shown or run under it. The id
// is the service's; a service that repeats one (two calls of one answer,
// or a call of an earlier turn: some servers number calls per answer) would
// otherwise have the editor show the second call as an update of the
// first, and the model sent two calls and two outputs under one id, with
// nothing saying which output answers which call. A call without an id
// gets one. kin sends the calls back itself (nothing is stored at the
// service), so a new id is paired with its output wherever it goes.
func (sess *Session) uniqueCalls(calls []model.Call) {
	if len(calls) == 0 {
		return
	}
	// The session's ids are those answered (every result kin recorded,
	// compacted or not) and the calls it still shows without a result (a
	// kin stopped before recording one): looked up where they are, not
	// copied into a set at every step of a long session.
	sess.wmu.Lock()
	defer sess.wmu.Unlock()
	var answered map[string]bool
	taken := map[string]bool{}
	if c := sess.conv; c != nil {
		answered = c.answered
		for _, it := range c.items {
			if it.kind == model.FunctionCall && !answered[it.callID] {
				taken[it.callID] = true
			}
		}
	}
	for i := range calls {
		id := calls[i].CallID
		for id == "" || answered[id] || taken[id] {
			id = freshCallID(calls[i].CallID)
		}
		taken[id] = true
		calls[i].CallID = id
	}
}

// alnum are the characters of a fresh id.
const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// freshCallID is a new id in place of was: as long as it when was is
// letters and digits only (Mistral's servers take only ids of nine of
// them), otherwise was with a random suffix ("call" when was is empty).
func freshCallID(was string) string {
	var b [9]byte
	plain := len(was) >= 6
	for _, c := range []byte(was) {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			plain = false
		}
	}
	if plain {
		out := make([]byte, len(was))
		_, _ = rand.Read(out)
		for i := range out {
			out[i] = alnum[int(out[i])%len(alnum)]
		}
		return string(out)
	}
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = alnum[int(b[i])%len(alnum)]
	}
	if was == "" {
		was = "call"
	}
	return fmt.Sprintf("%s_%s", was, b[:])
}
