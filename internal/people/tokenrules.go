package people

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxTokenLife is the furthest ahead a token's expiry may be set.
const MaxTokenLife = 10 * 365 * 24 * time.Hour

// ValidTokenName checks a token's name: 1–64 characters of UTF-8, none a
// control character, not starting or ending with a space (names are shown
// in lists and the audit, and told apart by eye).
func ValidTokenName(name string) error {
	n := utf8.RuneCountInString(name)
	switch {
	case name == "" || n > 64:
		return errors.New("a token's name is 1–64 characters")
	case !utf8.ValidString(name):
		return errors.New("a token's name must be valid UTF-8")
	case strings.TrimSpace(name) != name:
		return errors.New("a token's name may not start or end with a space")
	}
	for _, r := range name {
		if unicode.IsControl(r) || !unicode.IsPrint(r) && r != ' ' {
			return errors.New("a token's name may hold no control or invisible characters")
		}
	}
	return nil
}

// ParseTokenExpiry reads when a token should expire: "never" (zero), a
// number of days ("30d", 1–3650), or a date ("2027-01-31": the start of
// that day, UTC) or an RFC 3339 time, in the future and within
// MaxTokenLife of now.
func ParseTokenExpiry(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	var at time.Time
	switch {
	case s == "never":
		return time.Time{}, nil
	case strings.HasSuffix(s, "d"):
		n, err := strconv.Atoi(strings.TrimSuffix(s, "d"))
		if err != nil || n < 1 || n > 3650 {
			return time.Time{}, errors.New("a number of days is 1d to 3650d")
		}
		at = now.Add(time.Duration(n) * 24 * time.Hour)
	default:
		var err error
		if at, err = time.Parse(time.DateOnly, s); err != nil {
			if at, err = time.Parse(time.RFC3339, s); err != nil {
				return time.Time{}, fmt.Errorf("the expiry %q is not never, a number of days (30d) or a date (2027-01-31)", s)
			}
		}
	}
	if !at.After(now) {
		return time.Time{}, errors.New("the expiry is not in the future")
	}
	if at.Sub(now) > MaxTokenLife {
		return time.Time{}, errors.New("the expiry is more than ten years away")
	}
	return at, nil
}

// Identity is who a token acts as: its owner, at the token's level or the
// owner's present one, whichever is lower; false when the token is dead
// (Dead).
func (t Token) Identity(users *Users) (Identity, bool) {
	if t.Dead(users) != "" {
		return Identity{}, false
	}
	u, _ := users.Lookup(t.Owner)
	return Identity{User: u.Name, Level: min(t.Level, u.Level), Via: "token", Token: t.Name}, true
}

// Legacy reports a token made before tokens were bound to their owner's
// account (its record has no binding).
func (t Token) Legacy() bool { return t.binding == "" }

// Dead says why a token no longer works, as users (this replica's users
// file) has it, or "" while it does: its owner is no longer in the users
// file, or is not the account it was made for (a new password, or the
// account removed and made again) — its tokens end with their account. A
// legacy token (made before tokens were bound to their account) is dead:
// nothing tells which password it was made under, so binding it to the
// present one would bring back a leaked token that a password change
// ended.
func (t Token) Dead(users *Users) string {
	u, ok := users.Lookup(t.Owner)
	switch {
	case users == nil || !ok:
		return "no longer valid: its owner is not in the users file"
	case t.Legacy():
		return "no longer valid: made before tokens were bound to their owner's password; make a new one"
	case t.binding != u.tokenBinding():
		return "no longer valid: password changed"
	}
	return ""
}

// tokenBinding names the account a token is made for: its name and
// password hash (a new password, or an account removed and made again
// with one, gives another), hashed, so that the token store holds no
// password hash.
func (x User) tokenBinding() string {
	h := sha256.New()
	h.Write([]byte("keydeck token owner\x00" + x.Name + "\x00"))
	h.Write(x.hash)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}
