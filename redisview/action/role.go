package action

import (
	"fmt"
	"strings"
)

// Role is what a signed-in person may do. Roles are ordered: each one may do
// everything the ones below it may. The zero value is Viewer, so an Actor
// built without a role can never write.
type Role int

const (
	Viewer  Role = iota // reads everything that is not sensitive
	Support             // plus the support actions (unban, unlock, reset a limit, …)
	Admin               // plus generic key actions (delete, TTL) and undo
)

var roleNames = [...]string{Viewer: "viewer", Support: "support", Admin: "admin"}

// ParseRole reads a role name as written in the users file or a proxy header
// (case-insensitive).
func ParseRole(s string) (Role, error) {
	for r, name := range roleNames {
		if strings.EqualFold(strings.TrimSpace(s), name) {
			return Role(r), nil
		}
	}
	return Viewer, fmt.Errorf("%w: unknown role %q (want viewer, support or admin)", ErrInvalid, s)
}

func (r Role) String() string {
	if r >= 0 && int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("role(%d)", int(r))
}

// Allows reports whether someone with role r may run an action that requires need.
func (r Role) Allows(need Role) bool { return r >= need && int(r) < len(roleNames) }

// Actor is who asks for an action; the handler builds it from the session,
// never from the request body.
type Actor struct {
	User string
	Role Role
}
