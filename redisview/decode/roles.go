package decode

import (
	"context"
	"errors"
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

func readReservation(ctx context.Context, c redis.Cmdable, env Env, f *schema.Family, key string, p *schema.ReservationParams) (Reservation, error) {
	s, ok, err := smallString(ctx, c, key)
	if err != nil {
		return Reservation{}, err
	}
	if !ok {
		return Reservation{}, notDecodable("the key is gone")
	}
	if _, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
		return Reservation{}, notDecodable("the value is not a reserved amount")
	}
	d, err := ttl(ctx, c, key)
	if err != nil {
		return Reservation{}, err
	}
	r := Reservation{Amount: strings.TrimSpace(s), Unit: p.Unit, TTL: d, NoTTL: d < 0}
	if d >= 0 && f.TTL.Max > 0 && d <= f.TTL.Max {
		r.Age, r.MaxTTL = f.TTL.Max-d, f.TTL.Max
	}
	r.Overdue = Overdue(f, d)
	if env.Pack == nil {
		return r, nil
	}
	m, ok := env.Pack.Classifier().Match(env.DB, key)
	if !ok || m.Family != f {
		return r, nil
	}
	id, ok := RequestID(m)
	if !ok || len(ConcurrencyFamilies(env.Pack, env.DB)) == 0 {
		return r, nil
	}
	sets, complete, err := FindConcurrencySets(ctx, c, env.Pack, env.DB)
	if err != nil {
		return Reservation{}, err
	}
	in, err := InSets(ctx, c, sets, []string{id})
	if err != nil {
		return Reservation{}, err
	}
	r.SetsChecked, r.SetsComplete, r.InSet = len(sets), complete, in[id]
	r.Checked = true
	r.Orphaned = r.Overdue && complete && r.InSet == ""
	return r, nil
}

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

func readConcurrencySet(ctx context.Context, c redis.Cmdable, env Env, key string, p *schema.ConcurrencySetParams) (ConcurrencySet, error) {
	n, err := c.SCard(ctx, key).Result()
	if err != nil {
		return ConcurrencySet{}, err
	}
	d, err := ttl(ctx, c, key)
	if err != nil {
		return ConcurrencySet{}, err
	}
	cs := ConcurrencySet{InFlight: n, Limit: p.Limit, TTL: d}
	if n == 0 {
		return cs, nil
	}
	// One SSCAN page: COUNT bounds the work; a small (listpack, intset)
	// set comes back whole, and is cut to MaxMembers here.
	ids, _, err := c.SScan(ctx, key, 0, "", MaxMembers).Result()
	if err != nil {
		return ConcurrencySet{}, err
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
	rf := reservationFamily(env)
	if rf == nil {
		return cs, nil
	}
	cs.ReservationFamily = rf.ID
	name := rf.Pattern.Placeholders()[0].Name
	pipe := c.Pipeline()
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
	if pipe.Len() == 0 {
		return cs, nil
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return ConcurrencySet{}, err
	}
	for i, e := range exists {
		if e != nil {
			cs.Members[i].Reserved = e.Val() > 0
		}
	}
	return cs, nil
}

// reservationFamily is the pack's reservation family a concurrency set's
// member names: the seeds' q:conc:{keyId} holds request ids and
// q:reserved:{requestId} is the reservation of one, so it is the one
// reservation family in the set's database whose pattern has a single
// placeholder. More than one such family is ambiguous: none.
func reservationFamily(env Env) *schema.Family {
	if env.Pack == nil {
		return nil
	}
	var found *schema.Family
	for _, f := range env.Pack.Families {
		if f.Role != schema.RoleReservation || !f.InDB(env.DB) || len(f.Pattern.Placeholders()) != 1 {
			continue
		}
		if found != nil {
			return nil
		}
		found = f
	}
	return found
}

// BreakerHint is an advisory circuit-breaker marker: a replica opened its
// breaker (the gateway seed: written on a local OPEN transition, read by
// the other replicas to open theirs faster, never to close one).
type BreakerHint struct {
	State string // the marker as written ("open")
	Open  bool   // the marker says open
	TTL   time.Duration
}

func readBreakerHint(ctx context.Context, c redis.Cmdable, key string) (BreakerHint, error) {
	s, ok, err := smallString(ctx, c, key)
	if err != nil {
		return BreakerHint{}, err
	}
	if !ok {
		return BreakerHint{}, notDecodable("the key is gone")
	}
	d, err := ttl(ctx, c, key)
	if err != nil {
		return BreakerHint{}, err
	}
	return BreakerHint{State: s, Open: strings.EqualFold(strings.TrimSpace(s), "open"), TTL: d}, nil
}

// Leaderboard is a sorted set's size and first entry in the pack's order.
type Leaderboard struct {
	Card     int64
	Retained int    // the pack's pruning bound; 0: unbounded
	Order    string // desc or asc
	HasTop   bool
	Top      string
	TopScore float64
}

func readLeaderboard(ctx context.Context, c redis.Cmdable, key string, p *schema.LeaderboardParams) (Leaderboard, error) {
	n, err := c.ZCard(ctx, key).Result()
	if err != nil {
		return Leaderboard{}, err
	}
	lb := Leaderboard{Card: n, Retained: p.Retained, Order: p.Order}
	if n == 0 {
		return lb, nil
	}
	var top []redis.Z
	if p.Order == "asc" {
		top, err = c.ZRangeWithScores(ctx, key, 0, 0).Result()
	} else {
		top, err = c.ZRevRangeWithScores(ctx, key, 0, 0).Result()
	}
	if err != nil {
		return Leaderboard{}, err
	}
	if len(top) == 1 {
		m, _ := top[0].Member.(string)
		lb.HasTop, lb.Top, lb.TopScore = true, m, top[0].Score
	}
	return lb, nil
}

// Bloom bounds: the longest bitmap whose set bits are counted, and the
// byte range one BITCOUNT covers (BITCOUNT is O(N): a 512 KiB range takes
// a few hundred µs, so no one command nears 2 ms however long the bitmap).
const MaxBloomBytes = 64 << 20

var bitcountChunk int64 = 512 << 10 // a var so a test can cross chunk boundaries

// Bloom is a bitmap bloom filter's fill.
type Bloom struct {
	Bytes      int64 // STRLEN
	Bits       int64 // Bytes × 8
	Configured int64 // the pack's bit count
	Hashes     int
	Counted    bool  // set bits were counted (the bitmap is at most MaxBloomBytes)
	SetBits    int64 // BITCOUNT within the configured bits
	Fill       float64
	// FalsePositive is the chance that an item never added reads as
	// present: (set / bits)^hashes.
	FalsePositive float64
	MembersKey    string // the pack's exact set, if it links one
	HasMembers    bool   // MembersKey was read
	Members       int64  // its SCARD
}

func readBloom(ctx context.Context, c redis.Cmdable, m schema.Match, key string, p *schema.BloomParams) (Bloom, error) {
	n, err := c.StrLen(ctx, key).Result()
	if err != nil {
		return Bloom{}, err
	}
	b := Bloom{Bytes: n, Bits: n * 8, Configured: p.Bits, Hashes: p.Hashes}
	if p.Members != nil {
		if k, err := p.Members.Key(m.Map()); err == nil {
			b.MembersKey = k
		}
	}
	pipe := c.Pipeline()
	var counts []*redis.IntCmd
	if n <= MaxBloomBytes {
		b.Counted = true
		for start := int64(0); start < n; start += bitcountChunk {
			end := min(start+bitcountChunk, n) - 1
			counts = append(counts, pipe.BitCount(ctx, key, &redis.BitCount{Start: start, End: end}))
		}
	}
	var card *redis.IntCmd
	if b.MembersKey != "" {
		card = pipe.SCard(ctx, b.MembersKey)
	}
	if pipe.Len() > 0 {
		if _, err := pipe.Exec(ctx); err != nil {
			return Bloom{}, err
		}
	}
	for _, cnt := range counts {
		b.SetBits += cnt.Val()
	}
	if card != nil {
		b.HasMembers, b.Members = true, card.Val()
	}
	if b.Counted {
		// The application's positions are below the configured bit count;
		// a shorter string reads as zeros beyond its end, so the fraction
		// is always of the configured bits.
		b.Fill = float64(b.SetBits) / float64(p.Bits)
		b.FalsePositive = math.Pow(b.Fill, float64(p.Hashes))
	}
	return b, nil
}

// Cooldown blocks an action while it exists.
type Cooldown struct {
	TTL  time.Duration
	Ends time.Time // now + TTL; zero without a TTL
}

func readCooldown(ctx context.Context, c redis.Cmdable, key string, now time.Time) (Cooldown, error) {
	d, err := ttl(ctx, c, key)
	if err != nil {
		return Cooldown{}, err
	}
	if d == -2 { // go-redis passes PTTL's -2 (no such key) through
		return Cooldown{}, notDecodable("the key is gone")
	}
	cd := Cooldown{TTL: d}
	if d >= 0 {
		cd.Ends = now.Add(d).UTC()
	}
	return cd, nil
}

// Counter is an INCR counter, against the pack's limit if it gives one.
type Counter struct {
	Value    int64
	Limit    int64 // 0: none
	OnExceed string
	TTL      time.Duration
	Reached  bool
}

func readCounter(ctx context.Context, c redis.Cmdable, key string, p *schema.CounterParams) (Counter, error) {
	s, ok, err := smallString(ctx, c, key)
	if err != nil {
		return Counter{}, err
	}
	if !ok {
		return Counter{}, notDecodable("the key is gone")
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return Counter{}, notDecodable("the value is not an integer count")
	}
	d, err := ttl(ctx, c, key)
	if err != nil {
		return Counter{}, err
	}
	onExceed := p.OnExceed
	if onExceed == "" {
		onExceed = "reject"
	}
	return Counter{Value: n, Limit: p.Limit, OnExceed: onExceed, TTL: d, Reached: p.Limit > 0 && n >= p.Limit}, nil
}

// Marker is a key whose existence is the meaning (an idempotency mark, a
// used nonce): the value as written, and how long it is kept.
type Marker struct {
	Value string
	TTL   time.Duration
	// At is the value read as a Unix time (s or ms) when it is one within
	// a few years of now; zero otherwise.
	At time.Time
}

func readMarker(ctx context.Context, c redis.Cmdable, key string, now time.Time) (Marker, error) {
	s, ok, err := smallString(ctx, c, key)
	if err != nil {
		return Marker{}, err
	}
	if !ok {
		return Marker{}, notDecodable("the key is gone")
	}
	d, err := ttl(ctx, c, key)
	if err != nil {
		return Marker{}, err
	}
	return Marker{Value: s, TTL: d, At: EpochNear(s, now)}, nil
}

// EpochNear reads s as a Unix time in seconds or milliseconds when it is
// one within ten years of now (a bare "1" is not a time); zero otherwise.
func EpochNear(s string, now time.Time) time.Time {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	const span = 10 * 365 * 24 * time.Hour
	near := func(t time.Time) bool { d := t.Sub(now); return d < span && d > -span }
	if t := time.UnixMilli(n); near(t) {
		return t.UTC()
	}
	if n < math.MaxInt64/1000 {
		if t := time.Unix(n, 0); near(t) {
			return t.UTC()
		}
	}
	return time.Time{}
}

// Stats is a hash of cumulative counters, the fields the pack names.
type Stats struct {
	Fields []StatField
}

// StatField is one named counter; Present is false when the field is absent.
type StatField struct {
	Name    string
	Value   string
	Present bool
}

func readStats(ctx context.Context, c redis.Cmdable, key string, p *schema.StatsParams) (Stats, error) {
	if len(p.Fields) == 0 {
		return Stats{}, notDecodable("the pack names no fields")
	}
	vals, err := c.HMGet(ctx, key, p.Fields...).Result()
	if err != nil {
		return Stats{}, err
	}
	var st Stats
	for i, f := range p.Fields {
		v, ok := vals[i].(string)
		if ok && len(v) > maxSmall {
			v = v[:maxSmall]
		}
		st.Fields = append(st.Fields, StatField{Name: f, Value: v, Present: ok})
	}
	return st, nil
}
