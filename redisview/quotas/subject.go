package quotas

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

// MaxSubjectID is the longest subject id (API key id) looked up.
const MaxSubjectID = 256

// ErrNoSubject: the connection's pack has no API key families.
var ErrNoSubject = errors.New("the pack has no API key families (a concurrency set keyed by one placeholder)")

// ErrBadID: an id that cannot be an API key id of the pack's patterns.
var ErrBadID = errors.New("not a key id")

// Subject is the families one API key's state is kept in, found by role:
// the concurrency set keyed by one placeholder (q:conc:{keyId}) names the
// subject; the token bucket keyed by the same placeholder alone
// (q:rps:{keyId}), the quota keyed by it and a period (q:tokens:{keyId}:
// {yyyyMM}), and the reservation family the set's members fill
// (q:reserved:{requestId}).
type Subject struct {
	Name        string // the placeholder ("keyId")
	DB          int
	Concurrency *schema.Family
	Bucket      *schema.Family // nil when the pack has none
	Budget      *schema.Family
	Reservation *schema.Family
}

// SubjectOf finds the API key families of pack p (database 0 for families
// of any database).
func SubjectOf(p *schema.Pack) (Subject, error) {
	if p == nil {
		return Subject{}, ErrNoSubject
	}
	var s Subject
	for _, f := range p.Families {
		if f.Role == schema.RoleConcurrencySet && !f.Sensitive && len(f.Pattern.Placeholders()) == 1 {
			s.Concurrency, s.Name = f, f.Pattern.Placeholders()[0].Name
			if len(f.DBs) > 0 {
				s.DB = f.DBs[0]
			}
			break
		}
	}
	if s.Concurrency == nil {
		return Subject{}, ErrNoSubject
	}
	for _, f := range p.Families {
		if f.Sensitive || !f.InDB(s.DB) {
			continue
		}
		phs := f.Pattern.Placeholders()
		switch {
		case f.Role == schema.RoleTokenBucket && len(phs) == 1 && phs[0].Name == s.Name && s.Bucket == nil:
			s.Bucket = f
		case f.Role == schema.RoleQuota && len(phs) == 2 && s.Budget == nil && periodPlaceholder(f, s.Name) != "":
			s.Budget = f
		}
	}
	s.Reservation = decode.ReservationFamily(p, s.DB)
	return s, nil
}

// periodPlaceholder is the quota's placeholder other than name, when the
// other one is name.
func periodPlaceholder(f *schema.Family, name string) string {
	phs := f.Pattern.Placeholders()
	switch {
	case phs[0].Name == name && phs[1].Name != name:
		return phs[1].Name
	case phs[1].Name == name && phs[0].Name != name:
		return phs[0].Name
	}
	return ""
}

// Period is one budget period's row.
type Period struct {
	Label string // "this month", "last month"
	Value string // the period placeholder's value (202612)
	Row   Row    // Gone when the key does not exist
}

// SubjectState is one API key's state, read at Read.
type SubjectState struct {
	ID      string
	Subject Subject
	Read    time.Time

	BucketKey    string
	BucketExists bool
	Bucket       decode.TokenBucket
	BucketNote   string
	BucketTTL    time.Duration

	Budgets []Period

	Concurrency Row // Gone when no request is in flight
	// Reservations are those of the set's members (at most MaxMembers),
	// oldest first; a Gone one is a member whose reservation is gone.
	Reservations []Row
	Members      []string // the members read, in the order of Reservations
}

// Any reports whether any key of the id exists.
func (s SubjectState) Any() bool {
	if s.BucketExists || !s.Concurrency.Gone {
		return true
	}
	for _, p := range s.Budgets {
		if !p.Row.Gone {
			return true
		}
	}
	return false
}

// SubjectKeys builds the id's keys from the families' patterns, checking
// that each classifies back to its family (an id holding a separator would
// name another family's key).
func (s Subject) keys(p *schema.Pack, id string, periods []Period) (bucket, conc string, budgets []string, err error) {
	if id == "" || len(id) > MaxSubjectID {
		return "", "", nil, fmt.Errorf("%w: want 1 to %d bytes", ErrBadID, MaxSubjectID)
	}
	cls := p.Classifier()
	build := func(f *schema.Family, vars map[string]string) (string, error) {
		k, err := f.Key(vars)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrBadID, err)
		}
		if m, ok := cls.Match(s.DB, k); !ok || m.Family != f {
			return "", fmt.Errorf("%w: %s would name a key of another family", ErrBadID, f.ID)
		}
		return k, nil
	}
	if conc, err = build(s.Concurrency, map[string]string{s.Name: id}); err != nil {
		return
	}
	if s.Bucket != nil {
		if bucket, err = build(s.Bucket, map[string]string{s.Name: id}); err != nil {
			return
		}
	}
	if s.Budget != nil {
		pp := periodPlaceholder(s.Budget, s.Name)
		for _, per := range periods {
			k, e := build(s.Budget, map[string]string{s.Name: id, pp: per.Value})
			if e != nil {
				return "", "", nil, e
			}
			budgets = append(budgets, k)
		}
	}
	return bucket, conc, budgets, nil
}

// periods are this and last period of the budget family, formatted as its
// period placeholder is (6 digits: yyyyMM, 8: yyyyMMdd).
func (s Subject) periods(now time.Time) []Period {
	if s.Budget == nil {
		return nil
	}
	p, _ := s.Budget.Params.(*schema.QuotaParams)
	loc := time.UTC
	period := "month"
	if p != nil {
		loc, period = p.Location(), p.Period
	}
	var ph schema.Placeholder
	for _, x := range s.Budget.Pattern.Placeholders() {
		if x.Name != s.Name {
			ph = x
		}
	}
	layout := "200601"
	if ph.Len == 8 || period == "day" {
		layout = "20060102"
	}
	t := now.In(loc)
	var cur, prev time.Time
	if period == "day" {
		cur = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
		prev = cur.AddDate(0, 0, -1)
		return []Period{{Label: "today", Value: cur.Format(layout)}, {Label: "yesterday", Value: prev.Format(layout)}}
	}
	cur = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, loc)
	prev = cur.AddDate(0, -1, 0)
	return []Period{{Label: "this month", Value: cur.Format(layout)}, {Label: "last month", Value: prev.Format(layout)}}
}

// ReadSubject reads API key id's state: one pipeline for the bucket, the
// budgets and the concurrency set (with one SSCAN page of its members), a
// second for the members' reservations.
func ReadSubject(ctx context.Context, conn *redisview.Conn, id string, now time.Time) (SubjectState, error) {
	pack := conn.Pack()
	s, err := SubjectOf(pack)
	if err != nil {
		return SubjectState{}, err
	}
	st := SubjectState{ID: id, Subject: s, Read: now, Budgets: s.periods(now)}
	bucket, conc, budgets, err := s.keys(pack, id, st.Budgets)
	if err != nil {
		return SubjectState{}, err
	}
	c := conn.DB(s.DB)
	pipe := c.Pipeline()
	var hm *redis.SliceCmd
	var bttl *redis.DurationCmd
	var tbp *schema.TokenBucketParams
	if bucket != "" {
		tbp, _ = s.Bucket.Params.(*schema.TokenBucketParams)
		st.BucketKey = bucket
		hm = pipe.HMGet(ctx, bucket, tbp.TokensField, tbp.TimeField)
		bttl = pipe.PTTL(ctx, bucket)
	}
	var qs []*pending
	for i, k := range budgets {
		st.Budgets[i].Row = Row{DB: s.DB, Key: k, Family: s.Budget}
		qs = append(qs, queue(ctx, pipe, &st.Budgets[i].Row, false))
	}
	st.Concurrency = Row{DB: s.DB, Key: conc, Family: s.Concurrency}
	cq := queue(ctx, pipe, &st.Concurrency, true)
	qs = append(qs, cq)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) && !isWrongType(err) {
		return SubjectState{}, conn.WrapErr(redisview.ReadError("reading the key's state", err))
	}
	for _, q := range qs {
		if err := q.decode(now); err != nil {
			return SubjectState{}, conn.WrapErr(redisview.ReadError("reading the key's state", err))
		}
	}
	if hm != nil {
		if err := st.decodeBucket(tbp, hm, bttl, now); err != nil {
			return SubjectState{}, conn.WrapErr(redisview.ReadError("reading the rps bucket", err))
		}
	}
	if err := st.readReservations(ctx, c, pack, cq, now); err != nil {
		return SubjectState{}, conn.WrapErr(redisview.ReadError("reading the key's reservations", err))
	}
	return st, nil
}

func (st *SubjectState) decodeBucket(p *schema.TokenBucketParams, hm *redis.SliceCmd, pttl *redis.DurationCmd, now time.Time) error {
	vals, err := hm.Result()
	if isWrongType(err) {
		st.BucketExists, st.BucketNote = true, "not a hash"
		return nil
	}
	if err != nil {
		return err
	}
	d, err := pttl.Result()
	if err != nil {
		return err
	}
	if d == -2 {
		return nil
	}
	st.BucketExists, st.BucketTTL = true, max(d, -1)
	num := func(v any) (float64, bool) {
		s, ok := v.(string)
		if !ok {
			return 0, false
		}
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	stored, ok := num(vals[0])
	if !ok {
		st.BucketNote = "field " + strconv.Quote(p.TokensField) + " is missing or not a number"
		return nil
	}
	tb := decode.TokenBucket{Now: now, Stored: stored, Capacity: p.Capacity, RefillPerS: p.RefillPerMs * 1000, Requested: p.Requested}
	last, hasLast := num(vals[1])
	if hasLast {
		if p.TimeUnit == "s" {
			last *= 1000
		}
		tb.LastRefill = time.UnixMilli(int64(last)).UTC()
	}
	tb.Tokens = decode.TokensNow(p, stored, last, hasLast, now)
	ms := func(x float64) time.Duration {
		if x <= 0 {
			return 0
		}
		return time.Duration(math.Ceil(x)) * time.Millisecond
	}
	if p.RefillPerMs > 0 {
		tb.ToFull = ms((p.Capacity - tb.Tokens) / p.RefillPerMs)
	}
	if tb.Tokens < p.Requested {
		tb.Refused = true
		if p.RefillPerMs > 0 {
			tb.RetryAfter = ms((p.Requested - tb.Tokens) / p.RefillPerMs)
		}
	}
	st.Bucket = tb
	return nil
}

// readReservations reads the reservation of each member of the set's SSCAN
// page, in one pipeline.
func (st *SubjectState) readReservations(ctx context.Context, c redis.Cmdable, pack *schema.Pack, cq *pending, now time.Time) error {
	rf := st.Subject.Reservation
	if cq.scan == nil || st.Concurrency.Gone || st.Concurrency.Note != "" {
		return nil
	}
	members, _, err := cq.scan.Result()
	if err != nil {
		if isWrongType(err) {
			return nil
		}
		return err
	}
	slices.Sort(members)
	members = slices.Compact(members)
	if len(members) > MaxMembers {
		members = members[:MaxMembers]
	}
	st.Concurrency.Checked = len(members)
	st.Concurrency.MoreMems = int64(len(members)) < st.Concurrency.Used
	if rf == nil {
		st.Members = members
		return nil
	}
	name := rf.Pattern.Placeholders()[0].Name
	var rows []*Row
	for _, m := range members {
		k, err := rf.Key(map[string]string{name: m})
		if err != nil || len(m) > 4<<10 {
			continue
		}
		rows = append(rows, &Row{DB: st.Subject.DB, Key: k, Family: rf, Vars: []schema.Var{{Name: name, Raw: m, Value: m}}})
	}
	if err := readRows(ctx, c, pack, rows, now, false); err != nil {
		return err
	}
	st.Concurrency.Orphans = nil
	for _, r := range rows {
		st.Reservations = append(st.Reservations, *r)
		if r.Gone {
			st.Concurrency.Orphans = append(st.Concurrency.Orphans, r.Var(name))
		}
	}
	slices.SortStableFunc(st.Reservations, func(a, b Row) int {
		switch {
		case a.Gone != b.Gone:
			if a.Gone {
				return -1
			}
			return 1
		case a.NoTTL != b.NoTTL:
			if a.NoTTL {
				return -1
			}
			return 1
		}
		return int(b.Age - a.Age)
	})
	for _, r := range st.Reservations {
		st.Members = append(st.Members, r.Var(name))
	}
	return nil
}
