package decode

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// A reservation (q:reserved:{requestId}) is orphaned when its request id
// is in no concurrency set (q:conc:{keyId}) and it has outlived a request:
// the seed writes the reservation at dispatch and adds the id to its key's
// set on start, and reconciliation deletes the one and removes the other;
// a reservation left behind by a reconciliation that removed the id but
// not the reservation holds its amount against the budget until its TTL
// (or for ever, without one).
//
// The seed's reservation names only its request id, and its value is only
// the reserved count: nothing says which key's set should hold it. So
// every concurrency set of the database is checked, found by a bounded
// SCAN (FindConcurrencySets) and looked up with one SMISMEMBER each.

// ReservationLifetime is how long a reservation is expected to live: the
// seed gives no request duration (only the 5-minute TTL safety net), so
// Keydeck takes one minute, well past an LLM call and the gap between the
// reservation's write and the SADD of its id.
const ReservationLifetime = time.Minute

// MaxConcurrencySets is the most concurrency sets checked for one
// reservation (and watched by the release action): more, and whether a
// reservation is orphaned is not known.
const MaxConcurrencySets = 60

// ScanCalls and ScanCount bound the SCAN that finds the sets: at most
// ScanCalls calls of COUNT ScanCount (30,000 keys).
const (
	ScanCalls = 30
	ScanCount = 1000
)

// ReservationAge is the age of a reservation with pttl left (-1: no TTL),
// from the family's TTL maximum; ok is false when it cannot be derived.
func ReservationAge(f *schema.Family, pttl time.Duration) (age time.Duration, ok bool) {
	if pttl < 0 || f == nil || f.TTL.Max <= 0 || pttl > f.TTL.Max {
		return 0, false
	}
	return f.TTL.Max - pttl, true
}

// Overdue reports a reservation older than ReservationLifetime, or with no
// TTL (it never expires, whatever its age).
func Overdue(f *schema.Family, pttl time.Duration) bool {
	if pttl < 0 {
		return true
	}
	age, ok := ReservationAge(f, pttl)
	return ok && age > ReservationLifetime
}

// ConcurrencyFamilies are the pack's concurrency-set families in db.
func ConcurrencyFamilies(p *schema.Pack, db int) []*schema.Family {
	if p == nil {
		return nil
	}
	var out []*schema.Family
	for _, f := range p.Families {
		if f.Role == schema.RoleConcurrencySet && f.InDB(db) {
			out = append(out, f)
		}
	}
	return out
}

// SensitiveConcurrency reports a sensitive concurrency-set family in db:
// its sets are never looked in, so whether a reservation is in no set
// (orphaned) cannot be known.
func SensitiveConcurrency(p *schema.Pack, db int) bool {
	return slices.ContainsFunc(ConcurrencyFamilies(p, db), func(f *schema.Family) bool { return f.Sensitive })
}

// FindConcurrencySets lists the concurrency sets of db: a SCAN MATCHing
// each concurrency family's literal prefix, at most ScanCalls calls of
// COUNT ScanCount in all. complete is false when the SCAN did not finish
// within that bound or found more than MaxConcurrencySets sets (those
// found are returned, at most MaxConcurrencySets), and when a family is
// sensitive (its sets are not listed: their members are never read).
func FindConcurrencySets(ctx context.Context, c redis.Cmdable, p *schema.Pack, db int) (sets []string, complete bool, err error) {
	var fams []*schema.Family
	for _, f := range ConcurrencyFamilies(p, db) {
		if !f.Sensitive {
			fams = append(fams, f)
		}
	}
	if len(fams) == 0 {
		return nil, !SensitiveConcurrency(p, db), nil
	}
	defer func() {
		complete = complete && !SensitiveConcurrency(p, db)
	}()
	cls := p.Classifier()
	calls := 0
	seen := map[string]bool{}
	for _, f := range fams {
		match := schema.EscapeGlob(f.Pattern.LiteralPrefix()) + "*"
		cursor := redisview.CursorStart
		for {
			if calls == ScanCalls {
				return sets, false, nil
			}
			keys, next, err := redisview.ScanStep(ctx, c, cursor, match, ScanCount, "")
			if err != nil {
				return nil, false, err
			}
			calls++
			for _, k := range keys {
				m, ok := cls.Match(db, k)
				if !ok || m.Family != f || seen[k] {
					continue
				}
				if len(sets) == MaxConcurrencySets {
					return sets, false, nil
				}
				seen[k] = true
				sets = append(sets, k)
			}
			if cursor = next; cursor.Done() {
				break
			}
		}
	}
	return sets, true, nil
}

// InSets looks up each id in each set (one SMISMEMBER per set, pipelined)
// and returns, per id, the first set holding it ("" when none).
func InSets(ctx context.Context, c redis.Cmdable, sets, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	if len(sets) == 0 || len(ids) == 0 {
		return out, nil
	}
	members := make([]any, len(ids))
	for i, id := range ids {
		members[i] = id
	}
	pipe := c.Pipeline()
	cmds := make([]*redis.BoolSliceCmd, len(sets))
	for i, s := range sets {
		cmds[i] = pipe.SMIsMember(ctx, s, members...)
	}
	if _, err := pipe.Exec(ctx); err != nil && !isWrongTypeErr(err) {
		return nil, err
	}
	for i, cmd := range cmds {
		vals, err := cmd.Result()
		if err != nil {
			if isWrongTypeErr(err) {
				continue // not a set: it holds no request
			}
			return nil, err
		}
		for j, in := range vals {
			if in && j < len(ids) && out[ids[j]] == "" {
				out[ids[j]] = sets[i]
			}
		}
	}
	return out, nil
}

func isWrongTypeErr(err error) bool {
	return err != nil && !errors.Is(err, redis.Nil) && strings.HasPrefix(err.Error(), "WRONGTYPE")
}

// RequestID is the id a reservation key names: its only placeholder's
// value; ok is false when the family has not exactly one placeholder.
func RequestID(m schema.Match) (string, bool) {
	phs := m.Family.Pattern.Placeholders()
	if len(phs) != 1 {
		return "", false
	}
	return m.Get(phs[0].Name)
}
