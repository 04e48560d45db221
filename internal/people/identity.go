package people

import (
	"time"

	"github.com/keydeck/keydeck/redisview/action"
)

// Identity is who is making a request.
type Identity struct {
	User  string
	Level action.Level
	Via   string // "session", "proxy", "open", "token"; "" when anonymous
	// Unmatched: a proxy identity that found no account in the users file.
	// Its name is only what the proxy sent, in a namespace of its own: it
	// owns no account, even one spelled the same (see Owns).
	Unmatched bool
	// Session is the session's id (its cookie's nonce) when Via is
	// "session", opened at Issued and ending at Expires.
	Session         string
	Issued, Expires time.Time
	// Token is the API token's name when Via is "token"; User is then its
	// owner.
	Token string
}

// Signed reports whether anyone is identified.
func (id Identity) Signed() bool { return id.Via != "" }

// CSRFBinding is what a CSRF token is bound to besides the browser's CSRF
// cookie: the session, or the user a trusted proxy names. Anonymous forms
// (sign-in) and open mode are bound to the cookie alone.
func (id Identity) CSRFBinding() string {
	switch id.Via {
	case "session":
		return "s:" + id.Session
	case "proxy":
		if id.Unmatched {
			return "q:" + id.User
		}
		return "p:" + id.User
	}
	return ""
}

// Owns reports whether name is this identity's own account: the session's
// user, or the users-file account a proxy identity matched.
func (id Identity) Owns(name string) bool {
	switch id.Via {
	case "session":
		return name == id.User
	case "proxy":
		return !id.Unmatched && name == id.User
	}
	return false
}

// Holder names the identity where per-person shares are counted (live
// websockets, the scan budget): an unmatched proxy name never shares an
// account's.
func (id Identity) Holder() string {
	if id.Unmatched {
		return "proxy:" + id.User
	}
	return "user:" + id.User
}

// unmatchedSuffix marks the name an unmatched proxy identity acts under.
// Account names hold no spaces, so no account is spelled like it.
const unmatchedSuffix = " (proxy, no account)"

// ActorName is the name the identity acts and is audited under: the
// account's, or for an unmatched proxy identity its name marked as such,
// so the audit never credits an account with what a namesake did; for a
// token, its owner's with the token's name ("alice (token ci-bot)").
func (id Identity) ActorName() string {
	if id.Via == "token" {
		return id.User + " (token " + id.Token + ")"
	}
	if id.Unmatched {
		return id.User + unmatchedSuffix
	}
	return id.User
}
