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

	// quota and concurrency-set: Used of Limit (0: no limit in the pack).
	Used, Limit int64
	Percent     float64 // Used / Limit × 100; meaningful when Limit > 0
	Unit        string
	ResetsAt    time.Time // quota: the next period boundary
	// Period is the quota's period as its key names it (202612), when the
	// pattern has a yyyyMM (or yyyyMMdd) placeholder; Past: an earlier
	// period than now's, a record rather than a live budget.
	Period string
	Past   bool

	// balance and reservation: the amount as written; config: the value.
	Amount string
	// reservation: NoTTL is the role's violation; Age derived from the
	// pack's TTL maximum minus the TTL left (0 when unknown).
	NoTTL bool
	Age   time.Duration
	// The orphan check (decode/orphan.go), against the concurrency sets
	// the walk knows: SetsChecked were looked in, SetsComplete when they
	// are every set of the database (within decode.MaxConcurrencySets),
	// InSet names the set holding the request id. Overdue: older than
	// decode.ReservationLifetime, or no TTL. Orphaned: overdue and in none
	// of every set. SetsKnown: the check ran for this row.
	SetsKnown    bool
	SetsChecked  int
	SetsComplete bool
	InSet        string
	Overdue      bool
	Orphaned     bool
	// SetsSensitive: a concurrency family is sensitive, so its sets are
	// never looked in and whether the reservation is orphaned is hidden.
	SetsSensitive bool

	// concurrency-set: the members read and those whose reservation is gone.
	Checked  int
	Orphans  []string
	MoreMems bool // the set holds members that were not checked

	// breaker-hint
	State string
	Open  bool
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
	switch r.Family.Role {
	case schema.RoleQuota, schema.RoleConcurrencySet:
		past := 0.0
		if r.Past {
			past = -1e15 // this period's budgets before past ones
		}
		if r.Limit > 0 {
			return past + r.Percent
		}
		return past + float64(r.Used) + float64(len(r.Orphans))*1e12
	case schema.RoleReservation:
		if r.NoTTL {
			return math.Inf(1)
		}
		if r.Orphaned {
			return 1e12 + r.Age.Seconds()
		}
		return r.Age.Seconds()
	case schema.RoleBalance:
		f, err := strconv.ParseFloat(r.Amount, 64)
		if err != nil {
			return math.Inf(1)
		}
		return -f // the least left first
	case schema.RoleBreakerHint:
		if r.Open {
			return 1e12 + r.TTL.Seconds()
		}
		return r.TTL.Seconds()
	}
	return 0
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
	if r.Family.Role == schema.RoleConcurrencySet {
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
		p, _ := f.Params.(*schema.ConcurrencySetParams)
		r.Used, r.Limit = n, 0
		if p != nil && p.Limit > 0 {
			r.Limit = p.Limit
			r.Percent = float64(n) / float64(p.Limit) * 100
		}
		r.Unit = "in flight"
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
	r.fromValue(strings.TrimSpace(s), d, now)
	return nil
}

// fromValue fills a row of a string role from its value s (trimmed) and
// its TTL d.
func (r *Row) fromValue(s string, d time.Duration, now time.Time) {
	f := r.Family
	switch p := f.Params.(type) {
	case *schema.QuotaParams:
		u, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			r.Note = "the value is not an integer count"
			return
		}
		r.Used, r.Limit, r.Unit = u, p.Limit, p.Unit
		if p.Limit > 0 {
			r.Percent = float64(u) / float64(p.Limit) * 100
		}
		r.ResetsAt = schema.NextPeriod(p.Period, p.Location(), now)
		r.Period, r.Past = keyPeriod(f, r.Vars, p, now)
	case *schema.BalanceParams:
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			r.Note = "the value is not a decimal amount"
			return
		}
		r.Amount, r.Unit = s, p.Unit
	case *schema.ReservationParams:
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			r.Note = "the value is not a reserved amount"
			return
		}
		r.Amount, r.Unit = s, p.Unit
		r.NoTTL = d == -1
		r.Age, _ = decode.ReservationAge(f, d)
		r.Overdue = decode.Overdue(f, d)
	default:
		switch f.Role {
		case schema.RoleBreakerHint:
			r.State, r.Open = s, strings.EqualFold(s, "open")
		case schema.RoleConfig:
			r.Amount = s
		}
	}
}

// keyPeriod finds the period a quota key names: the value of its digits
// placeholder of 6 (month: yyyyMM) or 8 (day: yyyyMMdd) characters, and
// whether it is before now's period in the pack's zone.
func keyPeriod(f *schema.Family, vars []schema.Var, p *schema.QuotaParams, now time.Time) (string, bool) {
	layout, n := "200601", 6
	if p.Period == "day" {
		layout, n = "20060102", 8
	}
	for _, ph := range f.Pattern.Placeholders() {
		if ph.Class != schema.ClassDigits || ph.Len != n {
			continue
		}
		for _, v := range vars {
			if v.Name == ph.Name {
				cur := now.In(p.Location()).Format(layout)
				return v.Value, v.Value < cur
			}
		}
	}
	return "", false
}

func isWrongType(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE") }

// reservationFamily is the pack's reservation family a concurrency set's
// members name: the one reservation family of the set's database with a
// single placeholder (q:reserved:{requestId}); nil when none or several.
func reservationFamily(p *schema.Pack, db int) *schema.Family {
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
		rf := reservationFamily(pack, r.DB)
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
