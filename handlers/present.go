package handlers

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
)

// A role's words on the list pages are its presenter's, registered from
// the role's present_*.go file next to its decoded panel: the Rate limits
// and Locks pages ask these tables, so a new role adds a file and edits no
// page.

// limitPresenter is a limit role's text on the Rate limits page.
type limitPresenter struct {
	// rank is the role's place when the page names the roles it lists
	// (roleList), lowest first: the order the page has always used.
	rank int
	// limit is the pack's limit of a family, in words.
	limit func(f *schema.Family) string
	// level is where a row stands against it ("3 of 10 used · 7 left").
	level func(f *schema.Family, st limits.State) string
}

var limitPresenters = map[schema.Role]limitPresenter{}

// lockPresenter is a lock role's text on the Locks page.
type lockPresenter struct {
	// rank is the role's place when the page names the roles it lists
	// (roleList), lowest first.
	rank int
	// value says what a family's value holds.
	value func(f *schema.Family) string
	// holder is a row's holder, from the start of its value (not called
	// for a sensitive family, an unreadable key, or a known unlock time).
	holder func(st limits.State) string
	// hold is how long the pack expects a hold to last; nil or 0: it
	// gives none.
	hold func(f *schema.Family) time.Duration
}

var lockPresenters = map[schema.Role]lockPresenter{}

// presenterFor is the presenter table's entry for f's role.
func presenterFor[P any](table map[schema.Role]P, f *schema.Family) (P, bool) {
	p, ok := table[f.Role]
	return p, ok
}

func (p limitPresenter) order() int { return p.rank }
func (p lockPresenter) order() int  { return p.rank }

// roleList names a table's roles for a message, "a, b or c", in their
// presenters' rank (a page's sentence does not change with the map's
// order or the roles' spelling; equal ranks fall back to the name).
func roleList[P interface{ order() int }](table map[schema.Role]P) string {
	roles := make([]schema.Role, 0, len(table))
	for r := range table {
		roles = append(roles, r)
	}
	slices.SortFunc(roles, func(a, b schema.Role) int {
		return cmp.Or(cmp.Compare(table[a].order(), table[b].order()), cmp.Compare(a, b))
	})
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = string(r)
	}
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// expectedHold is how long the pack expects a hold of f to last, 0 none.
func expectedHold(f *schema.Family) time.Duration {
	if p, ok := presenterFor(lockPresenters, f); ok && p.hold != nil {
		return p.hold(f)
	}
	return 0
}
