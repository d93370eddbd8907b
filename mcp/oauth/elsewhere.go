package oauth

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/lockedfile"
	"github.com/kin-dev/kin/mcp/config"
)

// A sign-in takes the person minutes in the browser, and every editor
// window runs its own kin on one KIN_HOME: while one kin signs in (its
// mcp/login removed the stored sign-in first), another finds the sign-in
// gone at its next renewal and gets a 401. Asking the person there too
// would show a second prompt for the sign-in they are doing. So the kin
// that asks holds "<key>.signin" locked (the kernel lets a killed
// process's lock go) for the whole sign-in, and another kin that needs
// one meanwhile waits and takes the token it stores. No lock of the
// endpoint's file is held while waiting: renewals and sign-outs go on.

// signInPoll is how often a kin waiting for another's sign-in looks.
const signInPoll = 200 * time.Millisecond

// WaitingLog is the message logged when a kin begins to wait for the
// sign-in another kin has under way.
const WaitingLog = "mcp oauth: waiting for the sign-in under way in another kin"

// claimSignIn takes the endpoint's sign-in lock without waiting. It
// returns nil (and no error) when another kin holds it.
func (st *store) claimSignIn(key string) (*os.File, error) {
	if err := os.MkdirAll(st.dir, 0o700); err != nil {
		return nil, storeError("create", err)
	}
	f, err := os.OpenFile(filepath.Join(st.dir, key+".signin"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, storeError("create", err)
	}
	if err := lockedfile.TryLock(f); err != nil {
		f.Close()
		if errors.Is(err, lockedfile.ErrLocked) {
			return nil, nil
		}
		return nil, storeError("lock", err)
	}
	return f, nil
}

func releaseSignIn(f *os.File) {
	if f != nil {
		_ = lockedfile.Unlock(f)
		f.Close()
	}
}

// signInHere runs a sign-in unless another kin's is under way: then it
// waits for that one and takes its token. force (mcp/login, asked for in
// this window) asks the person whatever another kin does.
func (m *Manager) signInHere(ctx context.Context, s config.Server, ep *endpoint, a signInArgs, force bool) error {
	since := time.Now()
	before := ""
	if r, err := m.store.read(ep.key); err == nil && r.Token != nil {
		before = r.Token.AccessToken
	}
	held, err := m.store.claimSignIn(ep.key)
	if err != nil {
		// Cannot tell whether another kin signs in: ask, as before.
		m.log.Warn("mcp oauth: the sign-in lock is unusable", zap.String("server", s.Name), zap.String("error", err.Error()))
	}
	if held == nil && err == nil && !force {
		m.log.Info(WaitingLog, zap.String("server", s.Name), zap.String("endpoint", shortKey(ep.key)))
	}
	for held == nil && err == nil && !force {
		if m.takeStored(ep, s, m.stored(ep), before) {
			return nil
		}
		t := time.NewTimer(signInPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return &Error{Kind: KindTimeout, Msg: "the sign-in under way in another kin window did not finish: " + ctx.Err().Error()}
		case <-t.C:
		}
		if held, err = m.store.claimSignIn(ep.key); held == nil {
			continue
		}
		// The other kin's sign-in ended (or the kin did): its token, or
		// its failure (the person declined or never came back: asking
		// again here at once would undo that answer), else ask. One read
		// of the record tells both.
		r := m.stored(ep)
		if m.takeStored(ep, s, r, before) {
			releaseSignIn(held)
			return nil
		}
		if r != nil && r.SignInFailed.After(since) {
			releaseSignIn(held)
			return &Error{Kind: KindNeedsLogin, Msg: "the sign-in in another kin window did not finish: run mcp/login to sign in to " + s.Name}
		}
	}
	defer releaseSignIn(held)
	err = m.runSignIn(ctx, s, ep, a)
	if err != nil && held != nil && !errors.Is(ctx.Err(), context.Canceled) {
		_ = m.store.update(ep.key, func(r *record) error {
			r.SignInFailed = time.Now().UTC()
			return nil
		})
	}
	return err
}

// stored is the endpoint's record as stored now, nil when unreadable.
func (m *Manager) stored(ep *endpoint) *record {
	r, err := m.store.read(ep.key)
	if err != nil {
		return nil
	}
	return r
}

// takeStored puts in use the sign-in in r (nil: none) when another kin
// stored it since the wait began (its access token is not before), and
// reports whether it did.
func (m *Manager) takeStored(ep *endpoint, s config.Server, r *record, before string) bool {
	if r == nil {
		return false
	}
	t := usableToken(r.Token, s)
	if t == nil || t.AccessToken == before || expiredForGood(t) {
		return false
	}
	ps := m.newSource(ep, s, t, "")
	ep.mu.Lock()
	ep.ts, ep.noRefresh, ep.lastErr = ps, false, ""
	ep.mu.Unlock()
	m.log.Info("mcp oauth: took the sign-in made in another kin", zap.String("server", s.Name), zap.String("endpoint", shortKey(ep.key)))
	return true
}
