package action

import (
	"fmt"
	"strings"
)

// Level is what a signed-in person may do: viewer, support or admin (the
// words of the users file, the proxy's role header and every page). It is a
// person's permission, never a key's meaning (that is schema.Role). Levels
// are ordered: each one may do everything the ones below it may. The zero
// value is Viewer, so an Actor built without a level can never write.
type Level int

const (
	Viewer  Level = iota // reads everything that is not sensitive
	Support              // plus the support actions (unban, unlock, reset a limit, …)
	Admin                // plus generic key actions (delete, TTL) and undo
)

var levelNames = [...]string{Viewer: "viewer", Support: "support", Admin: "admin"}

// ParseLevel reads a level name as written in the users file or a proxy
// header (case-insensitive).
func ParseLevel(s string) (Level, error) {
	for l, name := range levelNames {
		if strings.EqualFold(strings.TrimSpace(s), name) {
			return Level(l), nil
		}
	}
	return Viewer, fmt.Errorf("%w: unknown role %q (want viewer, support or admin)", ErrInvalid, s)
}

func (l Level) String() string {
	if l >= 0 && int(l) < len(levelNames) {
		return levelNames[l]
	}
	return fmt.Sprintf("role(%d)", int(l))
}

// Allows reports whether someone at level l may run an action that requires need.
func (l Level) Allows(need Level) bool { return l >= need && int(l) < len(levelNames) }

// Actor is who asks for an action; the handler builds it from the session,
// never from the request body.
type Actor struct {
	User  string
	Level Level
	// Token is the API token's name when a token acts ("" for a person),
	// TokenOwner its owner; User is then "OWNER (token NAME)".
	Token, TokenOwner string
}
