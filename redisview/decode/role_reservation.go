package decode

import (
	"context"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// Reservation is an amount held until it is reconciled; it must expire.
type Reservation struct {
	Amount string // the value as written (a decimal count)
	Unit   string // the pack's unit, if any
	TTL    time.Duration
	// NoTTL: the key never expires, which the role forbids: a request
	// that died before reconciliation holds its amount for ever.
	NoTTL bool
	// Age is how long ago it was written, derived from the family's TTL
	// policy maximum (every write sets that TTL) minus the TTL left; zero
	// when it cannot be derived (no TTL, or the pack gives no maximum).
	Age    time.Duration
	MaxTTL time.Duration // the pack's TTL maximum Age is derived from

	// The orphan check (see orphan.go): Overdue is older than
	// ReservationLifetime (or no TTL); SetsChecked concurrency sets were
	// looked up, SetsComplete when they are every set of the database
	// (within the bounds); InSet names the set holding the request id.
	// Orphaned: overdue and in none of every set.
	Overdue      bool
	Checked      bool // the pack has concurrency sets, and they were looked in
	SetsChecked  int
	SetsComplete bool
	InSet        string
	Orphaned     bool
}

func init() {
	register(schema.RoleReservation, always(ClassBudget), readReservation)
}

// readReservation reads the amount and TTL, then, when the pack has
// concurrency sets in the database, looks for its request id in them: a
// second phase, the sets found once for every reservation of the read.
func readReservation(ctx context.Context, pipe redis.Pipeliner, in *Input) finish {
	sm := queueSmall(ctx, pipe, in.Key)
	return func() (any, step, error) {
		s, d, err := sm.get()
		if err != nil {
			return done(nil, err)
		}
		p, ok := in.Match.Family.Params.(*schema.ReservationParams)
		if !ok {
			return done(nil, nil)
		}
		if _, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
			return done(nil, notDecodable("the value is not a reserved amount"))
		}
		f := in.Match.Family
		r := &Reservation{Amount: strings.TrimSpace(s), Unit: p.Unit, TTL: d, NoTTL: d < 0}
		if d >= 0 && f.TTL.Max > 0 && d <= f.TTL.Max {
			r.Age, r.MaxTTL = f.TTL.Max-d, f.TTL.Max
		}
		r.Overdue = Overdue(f, d)
		id, ok := reservationID(in)
		if !ok {
			return done(r, nil)
		}
		return r, func(ctx context.Context, pipe redis.Pipeliner, in *Input) finish {
			return r.queueInSets(ctx, pipe, in, id)
		}, nil
	}
}

// reservationID is the request id to look for in the concurrency sets;
// ok is false when there is nothing to look in.
func reservationID(in *Input) (string, bool) {
	env := in.Env
	if env.Pack == nil {
		return "", false
	}
	m, ok := env.Pack.Classifier().Match(env.DB, in.Key)
	if !ok || m.Family != in.Match.Family {
		return "", false
	}
	id, ok := RequestID(m)
	if !ok || len(ConcurrencyFamilies(env.Pack, env.DB)) == 0 {
		return "", false
	}
	return id, true
}

// queueInSets queues one SMISMEMBER of id per concurrency set of the
// database and finishes the orphan check from the replies.
func (r *Reservation) queueInSets(ctx context.Context, pipe redis.Pipeliner, in *Input, id string) finish {
	sets, complete, err := in.concurrencySets(ctx)
	if err != nil {
		return func() (any, step, error) { return done(nil, err) }
	}
	cmds := make([]*redis.BoolSliceCmd, len(sets))
	for i, s := range sets {
		cmds[i] = pipe.SMIsMember(ctx, s, id)
	}
	return func() (any, step, error) {
		for i, cmd := range cmds {
			vals, err := cmd.Result()
			if isWrongTypeErr(err) {
				continue // not a set: it holds no request
			}
			if err != nil {
				return done(nil, err)
			}
			if len(vals) == 1 && vals[0] {
				r.InSet = sets[i]
				break
			}
		}
		r.SetsChecked, r.SetsComplete, r.Checked = len(sets), complete, true
		r.Orphaned = r.Overdue && complete && r.InSet == ""
		return done(r, nil)
	}
}

func init() {
	registerBudget(schema.RoleReservation, budgetRole{order: 3, fill: fillReservation, rank: rankReservation})
}

func fillReservation(b *Budget, r BudgetRead) string {
	p, ok := r.Match.Family.Params.(*schema.ReservationParams)
	if !ok {
		return ""
	}
	if _, err := strconv.ParseFloat(r.Value, 64); err != nil {
		return "the value is not a reserved amount"
	}
	f := r.Match.Family
	b.Amount, b.Unit = r.Value, p.Unit
	b.NoTTL = r.TTL == -1
	b.Age, _ = ReservationAge(f, r.TTL)
	b.Overdue = Overdue(f, r.TTL)
	return ""
}

// rankReservation puts one without a TTL first, then the orphaned, then
// the oldest.
func rankReservation(b *Budget, _ time.Duration) float64 {
	if b.NoTTL {
		return math.Inf(1)
	}
	if b.Orphaned {
		return 1e12 + b.Age.Seconds()
	}
	return b.Age.Seconds()
}
