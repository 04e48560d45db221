package decode

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// MaxMembers is the most members of a set one decode reads (one SSCAN page).
const MaxMembers = 100

// ConcurrencySet is the in-flight request ids of one subject.
type ConcurrencySet struct {
	InFlight int64 // SCARD
	Limit    int64 // the pack's cap; 0: none configured in the pack
	TTL      time.Duration
	Members  []InFlight // at most MaxMembers, from one SSCAN page
	// More: the set holds members that were not read.
	More bool
	// ReservationFamily is the family a member's reservation key is built
	// from (the pack's reservation family whose only placeholder the
	// member fills); "" when the pack has none.
	ReservationFamily string
}

// InFlight is one member of a concurrency set.
type InFlight struct {
	ID string
	// Reservation is the member's reservation key ("" when no reservation
	// family applies or the member cannot fill its pattern); Reserved says
	// whether it exists.
	Reservation string
	Reserved    bool
	// TooLong: the id is longer than MaxCheckedID, so no reservation key
	// was built or checked (a link could not carry it either).
	TooLong bool
}

// MaxCheckedID is the longest member whose reservation is looked up: 100
// lookups of 1 MB names would make one page read megabytes.
const MaxCheckedID = 4 << 10

func init() {
	register(schema.RoleConcurrencySet, always(ClassBudget), readConcurrencySet)
}

// readConcurrencySet reads the size, TTL and one SSCAN page (COUNT bounds
// the work; a small listpack or intset set comes back whole, and is cut to
// MaxMembers here); a second phase checks each member's reservation.
func readConcurrencySet(ctx context.Context, pipe redis.Pipeliner, in *Input) finish {
	p, ok := in.Match.Family.Params.(*schema.ConcurrencySetParams)
	if !ok {
		return func() (any, step, error) { return nil, nil, nil }
	}
	card := pipe.SCard(ctx, in.Key)
	pttl := pipe.PTTL(ctx, in.Key)
	scan := pipe.SScan(ctx, in.Key, 0, "", MaxMembers)
	return func() (any, step, error) {
		if err := firstErr(card, pttl); err != nil {
			return done(nil, err)
		}
		n := card.Val()
		cs := &ConcurrencySet{InFlight: n, Limit: p.Limit, TTL: pttl.Val()}
		if n == 0 {
			return done(cs, nil)
		}
		ids, _, err := scan.Result()
		if err != nil {
			return done(nil, err)
		}
		seen := make(map[string]bool, len(ids))
		for _, id := range ids {
			if seen[id] || len(cs.Members) == MaxMembers {
				continue
			}
			seen[id] = true
			cs.Members = append(cs.Members, InFlight{ID: id})
		}
		cs.More = int64(len(cs.Members)) < n
		rf := ReservationFamily(in.Env.Pack, in.Env.DB)
		if rf == nil {
			return done(cs, nil)
		}
		cs.ReservationFamily = rf.ID
		return cs, cs.queueReserved(rf), nil
	}
}

// queueReserved is the second phase: one EXISTS per member's reservation.
func (cs *ConcurrencySet) queueReserved(rf *schema.Family) step {
	return func(ctx context.Context, pipe redis.Pipeliner, in *Input) finish {
		name := rf.Pattern.Placeholders()[0].Name
		exists := make([]*redis.IntCmd, len(cs.Members))
		for i := range cs.Members {
			if len(cs.Members[i].ID) > MaxCheckedID {
				cs.Members[i].TooLong = true
				continue
			}
			k, err := rf.Key(map[string]string{name: cs.Members[i].ID})
			if err != nil {
				continue // the id cannot fill the pattern (a separator in it)
			}
			cs.Members[i].Reservation = k
			exists[i] = pipe.Exists(ctx, k)
		}
		return func() (any, step, error) {
			for i, e := range exists {
				if e == nil {
					continue
				}
				if err := firstErr(e); err != nil {
					return done(nil, err)
				}
				cs.Members[i].Reserved = e.Val() > 0
			}
			return done(cs, nil)
		}
	}
}

// ReservationFamily is the pack's reservation family a concurrency set's
// member names: the seeds' q:conc:{keyId} holds request ids and
// q:reserved:{requestId} is the reservation of one, so it is the one
// reservation family in the set's database db whose pattern has a single
// placeholder. More than one such family is ambiguous: none.
func ReservationFamily(p *schema.Pack, db int) *schema.Family {
	if p == nil {
		return nil
	}
	var found *schema.Family
	for _, f := range p.Families {
		if f.Role != schema.RoleReservation || !f.InDB(db) || len(f.Pattern.Placeholders()) != 1 {
			continue
		}
		if found != nil {
			return nil
		}
		found = f
	}
	return found
}

func init() {
	registerBudget(schema.RoleConcurrencySet, budgetRole{order: 2, set: true, fill: fillConcurrencySet, rank: rankUsed})
}

// fillConcurrencySet reads a set's size against the pack's cap.
func fillConcurrencySet(b *Budget, r BudgetRead) string {
	p, _ := r.Match.Family.Params.(*schema.ConcurrencySetParams)
	b.Used, b.Limit = r.Card, 0
	if p != nil && p.Limit > 0 {
		b.Limit = p.Limit
		b.Percent = float64(r.Card) / float64(p.Limit) * 100
	}
	b.Unit = "in flight"
	return ""
}
