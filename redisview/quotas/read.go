// Package quotas reads a connection's quotas and budgets: every key of a
// family whose role is quota, balance, reservation, concurrency-set or
// breaker-hint, and the single-key config families beside them. A family
// may hold millions of keys, so a budgeted background walk per connection
// (Walker, shared by every viewer) keeps the most used N keys of each
// family and re-reads only those while it goes on walking. It also reads one
// gateway-style API key's state through its families' patterns (Subject).
// Every read is bounded: STRLEN with GETRANGE of at most MaxValue bytes,
// SCARD, PTTL, one SSCAN page; never KEYS, never a GET of unknown size.
package quotas

import (
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

// MaxValue is the longest value decoded: counts, amounts and markers are
// short; a longer value is not what the role says it is.
const MaxValue = 256

// Hidden is the note of a row of a sensitive family: read for its TTL
// only.
const Hidden = "hidden: sensitive"

// MaxMembers is the most members of one concurrency set checked for a
// reservation (one SSCAN page).
const MaxMembers = 50

// Shown reports whether the page shows keys of family f.
func Shown(f *schema.Family) bool {
	if f.Sensitive {
		return false
	}
	return decode.ClassOf(f) == decode.ClassBudget || IsConfig(f)
}

// IsConfig: a config family of one string key (cfg:routing:version), read
// directly rather than walked; shown when its value is an integer.
func IsConfig(f *schema.Family) bool {
	return f.Role == schema.RoleConfig && !f.Sensitive && f.Type == "string" && len(f.Pattern.Placeholders()) == 0
}

// Row is one key of a shown family, decoded at Read.
type Row struct {
	DB     int
	Key    string
	Family *schema.Family
	Vars   []schema.Var
	Read   time.Time

	Gone bool          // the key no longer exists
	TTL  time.Duration // -1: no expiry
	Note string        // why the value was not decoded

	// What the key's role read (the role's registerBudget in decode) and
	// the walk's orphan checks.
	decode.Budget
}

// Var returns the value of placeholder name, or "".
func (r Row) Var(name string) string {
	for _, v := range r.Vars {
		if v.Name == name {
			return v.Value
		}
	}
	return ""
}

// HasPercent: the row is measured against a limit.
func (r Row) HasPercent() bool { return r.Limit > 0 && !r.Gone && r.Note == "" }

// rank orders rows of one family: the higher, the nearer to a problem.
func (r Row) rank() float64 {
	if r.Gone {
		return math.Inf(-1)
	}
	if r.Note != "" {
		return math.Inf(1) // a value that breaks the role comes first
	}
	return decode.BudgetRank(r.Family.Role, &r.Budget, r.TTL)
}

// SortRows orders rows nearest to a problem first, then by key.
func SortRows(rows []Row) {
	slices.SortStableFunc(rows, func(a, b Row) int {
		ra, rb := a.rank(), b.rank()
		switch {
		case ra > rb:
			return -1
		case ra < rb:
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
}

// pending is one key's queued reads.
type pending struct {
	row    *Row
	strlen *redis.IntCmd
	value  *redis.StringCmd // GETRANGE 0 MaxValue-1
	card   *redis.IntCmd
	pttl   *redis.DurationCmd
	scan   *redis.ScanCmd
}

// queue adds a row's reads to p; checkMembers also reads one SSCAN page of
// a concurrency set.
func queue(ctx context.Context, p redis.Pipeliner, r *Row, checkMembers bool) *pending {
	q := &pending{row: r, pttl: p.PTTL(ctx, r.Key)}
	if r.Family.Sensitive {
		return q // its TTL only: never a value or a member
	}
	if decode.BudgetIsSet(r.Family.Role) {
		q.card = p.SCard(ctx, r.Key)
		if checkMembers {
			q.scan = p.SScan(ctx, r.Key, 0, "", MaxMembers)
		}
		return q
	}
	q.strlen = p.StrLen(ctx, r.Key)
	q.value = p.GetRange(ctx, r.Key, 0, MaxValue-1)
	return q
}

// decode fills the row from its reads at now.
func (q *pending) decode(now time.Time) error {
	r := q.row
	r.Read, r.Note, r.Gone = now, "", false
	d, err := q.pttl.Result()
	if err != nil {
		return err
	}
	if d == -2 {
		r.Gone = true
		return nil
	}
	r.TTL = d
	if d < 0 {
		r.TTL = -1
	}
	f := r.Family
	if f.Sensitive {
		r.Note = Hidden
		return nil
	}
	if q.card != nil {
		n, err := q.card.Result()
		if err != nil {
			if isWrongType(err) {
				r.Note = "not a set"
				return nil
			}
			return err
		}
		r.Note = decode.FillBudget(&r.Budget, decode.BudgetRead{Match: r.match(), Card: n, TTL: r.TTL, Now: now})
		return nil
	}
	n, err := q.strlen.Result()
	if err != nil {
		if isWrongType(err) {
			r.Note = "not a string"
			return nil
		}
		return err
	}
	if n > MaxValue {
		r.Note = "the value is " + strconv.FormatInt(n, 10) + " bytes, longer than this role's values"
		return nil
	}
	s, err := q.value.Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	s = strings.TrimSpace(s)
	if !decode.IsBudget(f.Role) {
		r.Amount = s // a config
		return nil
	}
	r.Note = decode.FillBudget(&r.Budget, decode.BudgetRead{Match: r.match(), Value: s, TTL: r.TTL, Now: now})
	return nil
}

// match is the row's family and placeholder values.
func (r *Row) match() schema.Match { return schema.Match{Family: r.Family, Vars: r.Vars} }

func isWrongType(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE") }

// checkOrphans looks up the reservation of each member read by the rows'
// SSCAN pages in one pipeline, and lists the members whose reservation is
// gone.
func checkOrphans(ctx context.Context, c redis.Cmdable, pack *schema.Pack, qs []*pending) error {
	type lookup struct {
		row    *Row
		member string
		exists *redis.IntCmd
	}
	var ls []lookup
	pipe := c.Pipeline()
	for _, q := range qs {
		if q.scan == nil || q.row.Gone || q.row.Note != "" {
			continue
		}
		r := q.row
		r.Orphans, r.Checked, r.MoreMems = nil, 0, false
		rf := decode.ReservationFamily(pack, r.DB)
		members, _, err := q.scan.Result()
		if err != nil {
			if isWrongType(err) {
				continue
			}
			return err
		}
		slices.Sort(members)
		members = slices.Compact(members)
		if len(members) > MaxMembers {
			members = members[:MaxMembers]
		}
		r.Checked = len(members)
		r.MoreMems = int64(len(members)) < r.Used
		if rf == nil {
			continue
		}
		name := rf.Pattern.Placeholders()[0].Name
		for _, m := range members {
			k, err := rf.Key(map[string]string{name: m})
			if err != nil || len(m) > 4<<10 {
				continue
			}
			ls = append(ls, lookup{row: r, member: m, exists: pipe.Exists(ctx, k)})
		}
	}
	if len(ls) == 0 {
		return nil
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	for _, l := range ls {
		if l.exists.Val() == 0 {
			l.row.Orphans = append(l.row.Orphans, l.member)
		}
	}
	return nil
}

// readRows reads rows in one pipeline (and a second for the reservations of
// concurrency set members), at now. c is the rows' database.
func readRows(ctx context.Context, c redis.Cmdable, pack *schema.Pack, rows []*Row, now time.Time, checkMembers bool) error {
	if len(rows) == 0 {
		return nil
	}
	pipe := c.Pipeline()
	qs := make([]*pending, len(rows))
	for i, r := range rows {
		qs[i] = queue(ctx, pipe, r, checkMembers)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) && !isWrongType(err) {
		return err
	}
	for _, q := range qs {
		if err := q.decode(now); err != nil {
			return err
		}
	}
	if checkMembers {
		return checkOrphans(ctx, c, pack, qs)
	}
	return nil
}

// checkReservations looks up the request id of each reservation row in
// sets (the concurrency sets of the rows' database the walk knows; one
// SMISMEMBER per set, pipelined) and marks the orphans: overdue, and in
// none of the sets when they are every set (complete).
func checkReservations(ctx context.Context, c redis.Cmdable, pack *schema.Pack, rows []*Row, sets []string, complete bool) error {
	var res []*Row
	var ids []string
	for _, r := range rows {
		r.SetsKnown, r.SetsChecked, r.SetsComplete, r.InSet, r.Orphaned, r.SetsSensitive = false, 0, false, "", false, false
		if r.Family.Role != schema.RoleReservation || r.Gone || r.Note != "" {
			continue
		}
		if len(decode.ConcurrencyFamilies(pack, r.DB)) == 0 {
			continue
		}
		if decode.SensitiveConcurrency(pack, r.DB) {
			// Sets never looked in: not known, not claimed.
			r.SetsKnown, r.SetsSensitive = true, true
			continue
		}
		id, ok := decode.RequestID(schema.Match{Family: r.Family, Vars: r.Vars})
		if !ok {
			continue
		}
		res, ids = append(res, r), append(ids, id)
	}
	if len(res) == 0 {
		return nil
	}
	in, err := decode.InSets(ctx, c, sets, ids)
	if err != nil {
		return err
	}
	for i, r := range res {
		r.SetsKnown, r.SetsChecked, r.SetsComplete, r.InSet = true, len(sets), complete, in[ids[i]]
		r.Orphaned = r.Overdue && complete && r.InSet == ""
	}
	return nil
}
