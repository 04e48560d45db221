package people

import (
	"context"
	"crypto/hmac"
	"log/slog"
	"sync"
	"time"
)

// Revocations keep the record of ended sessions where every replica sees
// it (SessionStore keeps it in the audit Redis).
type Revocations interface {
	// Revoke ends the session id, which would expire at expires. An error
	// means nothing was recorded.
	Revoke(ctx context.Context, id string, expires time.Time) error
	// RevokeUser voids every session of user issued at or before at;
	// sessions last at most maxAge. An error means nothing was recorded.
	RevokeUser(ctx context.Context, user string, at time.Time, maxAge time.Duration) error
	// Revoked reports whether the session id of user, issued at issued,
	// was ended. With an error, the answer is only what this replica knows.
	Revoked(ctx context.Context, user, id string, issued time.Time) (bool, error)
}

// MaxSessionTTL is the longest --session-ttl allows: a sign-out-everywhere
// record must outlive every session it voids, whatever TTL issued them.
const MaxSessionTTL = 720 * time.Hour

// storeTimeout bounds a session check: an unreachable store must not hold a
// page for the client's full dial timeout.
const storeTimeout = 500 * time.Millisecond

// Live tells whether a signed, unexpired session still holds: its user is
// in the users file with the password it was opened with, and it was not
// ended by a sign-out on any replica. ctx should outlive the request that
// opened a websocket: an open one checks again long after.
//
// When the store cannot be read the session is honoured (the audit Redis
// being down must not lock everyone out of a console that shows it down),
// except a session this replica ended itself; the error is returned for
// the caller to log (see StoreWarning). Writes fail closed: a sign-out that
// cannot be recorded is refused by the store.
func Live(ctx context.Context, store Revocations, s Signer, ss Session, u User) (bool, error) {
	if !hmac.Equal([]byte(ss.Password), []byte(s.PasswordBinding(u))) {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	revoked, err := store.Revoked(ctx, ss.User, ss.Nonce, time.UnixMilli(ss.Issued))
	return !revoked, err
}

// StoreWarning logs an unreadable session store at most every 30 s.
type StoreWarning struct {
	mu   sync.Mutex
	last time.Time
}

// Warn logs err unless it logged within the last 30 s.
func (w *StoreWarning) Warn(log *slog.Logger, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if now := time.Now(); now.Sub(w.last) >= 30*time.Second {
		w.last = now
		log.Warn("session store unreadable: sessions are honoured without checking sign-outs made on other replicas; sign-outs are refused until it is back", "err", err)
	}
}
