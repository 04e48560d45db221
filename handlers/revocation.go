package handlers

import (
	"context"
	"crypto/hmac"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/people"
)

// SessionStore keeps the record of ended sessions where every replica sees
// it (people.SessionStore keeps it in the audit Redis).
type SessionStore interface {
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

// maxSessionTTL is the longest --session-ttl allows: a sign-out-everywhere
// record must outlive every session it voids, whatever TTL issued them.
const maxSessionTTL = 720 * time.Hour

// storeTimeout bounds a session check: an unreachable store must not hold a
// page for the client's full dial timeout.
const storeTimeout = 500 * time.Millisecond

// sessionLive tells whether a signed, unexpired session still holds: its
// user is in the users file with the password it was opened with, and it
// was not ended by a sign-out on any replica.
//
// When the store cannot be read the session is honoured (the audit Redis
// being down must not lock everyone out of a console that shows it down),
// except a session this replica ended itself; the outage is logged. Writes
// fail closed: see logout and signOutEverywhere.
func (a *App) sessionLive(c echo.Context, ss people.Session, u people.User) bool {
	if !hmac.Equal([]byte(ss.Password), []byte(a.signer.PasswordBinding(u))) {
		return false
	}
	// Not the request's own context: an open websocket checks again long
	// after its request was hijacked.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), storeTimeout)
	defer cancel()
	revoked, err := a.auth.Sessions.Revoked(ctx, ss.User, ss.Nonce, time.UnixMilli(ss.Issued))
	if err != nil {
		a.storeDown.warn(a, err)
	}
	return !revoked
}

// storeWarning logs an unreadable session store at most every 30 s.
type storeWarning struct {
	mu   sync.Mutex
	last time.Time
}

func (w *storeWarning) warn(a *App, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if now := time.Now(); now.Sub(w.last) >= 30*time.Second {
		w.last = now
		a.log.Warn("session store unreadable: sessions are honoured without checking sign-outs made on other replicas; sign-outs are refused until it is back", "err", err)
	}
}
