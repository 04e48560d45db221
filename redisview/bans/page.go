package bans

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/browse"
)

// PageQuery is what a Bans page asks of one list.
type PageQuery struct {
	// Check is a name to check against the list ("" none).
	Check string
	// Listed: the page asks for this list's members (a read-only
	// filter's members are listed on request only); Filter and Cursor
	// are the page of members it asks for.
	Listed bool
	Filter string
	Cursor uint64
	// Pages is how many consistency pages this read steps (see
	// Checker.Step).
	Pages int
}

// ListRead is one list as a Bans page shows it: each part with the error
// that kept it from being read.
type ListRead struct {
	List List
	// Sensitive: the list is sensitive, so nothing was read.
	Sensitive bool

	Status    Status // the consistency check, after this read's step
	StatusErr error
	Health    Health
	HealthErr error
	// Check is the name checked (nil when none was asked).
	Check    *Check
	CheckErr error
	// Members is the page of members (nil when not read: a filter's
	// members not asked for, or MembersErr); Lacking are those of them
	// lacking a bloom bit (ban lists only).
	Members    *Page
	MembersErr error
	Lacking    map[string]bool
	LackingErr error
}

// Gate is what a list's state lets support do on it.
type Gate int

const (
	// GateOpen: ban and unban work (a member lacking bits gets its fix).
	GateOpen Gate = iota
	// GateFilter: the list is a read-only filter, not a ban list.
	GateFilter
	// GateUnread: the bloom could not be read.
	GateUnread
	// GateWidespread: most members lack their bits, so the pack's scheme
	// is suspect: ban and unban are disabled.
	GateWidespread
)

// Gate says whether ban and unban may be offered on the list.
func (r ListRead) Gate() Gate {
	switch {
	case !r.List.Bans:
		return GateFilter
	case r.Status.Widespread():
		return GateWidespread
	case r.HealthErr != nil:
		return GateUnread
	}
	return GateOpen
}

// ReadPage reads one list for a Bans page at now: a step of its
// consistency check, the bloom's health, the name checked and the page of
// members (with those lacking a bit). The reads go out together (one
// round trip per step of the deepest), not one after another.
func ReadPage(ctx context.Context, conn *redisview.Conn, l List, q PageQuery, now time.Time) ListRead {
	r := ListRead{List: l}
	if l.Sensitive {
		r.Sensitive = true
		return r
	}
	reads := []func(c redis.Cmdable){
		func(c redis.Cmdable) { r.Status, r.StatusErr = CheckerFor(conn, l).Step(ctx, c, now, q.Pages) },
		func(c redis.Cmdable) { r.Health, r.HealthErr = ReadHealth(ctx, c, l) },
	}
	if q.Check != "" {
		reads = append(reads, func(c redis.Cmdable) {
			ch, err := CheckName(ctx, c, l, q.Check)
			if r.CheckErr = err; err == nil {
				r.Check = &ch
			}
		})
	}
	if l.Bans || q.Listed {
		reads = append(reads, func(c redis.Cmdable) { r.readMembers(ctx, c, q) })
	}
	browse.Batch(ctx, conn.DB(l.DB), len(reads), func(i int, c redis.Cmdable) { reads[i](c) })
	return r
}

// readMembers reads the page of members and, on a ban list, which of them
// lack a bloom bit (the application ignores their bans).
func (r *ListRead) readMembers(ctx context.Context, c redis.Cmdable, q PageQuery) {
	page, err := Members(ctx, c, r.List, q.Filter, q.Cursor, PageSize)
	if err != nil {
		r.MembersErr = err
		return
	}
	r.Members = &page
	if !r.List.Bans {
		return
	}
	bad, err := Missing(ctx, c, r.List, page.Members)
	r.LackingErr = err
	r.Lacking = map[string]bool{}
	for _, m := range bad {
		r.Lacking[m] = true
	}
}
