// Package limits keeps the rate-limit and lock keys of a connection's pack
// in view: one budgeted background sweep per connection finds the keys of
// every family of role token-bucket, counter-window, sliding-window, lock
// and cooldown, keeps the most constrained rows of each family, and
// re-reads the kept rows now and then. Pages read the sweep's result,
// never Redis: however many viewers, the server sees one sweep.
package limits

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Kind is what a row is, from its family's role.
type Kind int

const (
	None     Kind = iota
	Bucket        // token-bucket
	Window        // counter-window (INCR + EXPIRE)
	Counter       // counter with a limit (attempts)
	Sliding       // sliding-window (ZSET of events), with its lock
	Bucket4j      // Bucket4j serialized state (BUCKET4J-STATE.md)
	Lock          // lock
	Cooldown      // cooldown
)

// KindOf says what rows of family f are; None for a family neither page
// shows. Which families are limits and locks is the role registry's say
// (decode.ClassOf); the kind is how the sweep reads a row of the role.
func KindOf(f *schema.Family) Kind {
	switch decode.ClassOf(f) {
	case decode.ClassLimit, decode.ClassLock:
		return kinds[f.Role]
	}
	return None
}

var kinds = map[schema.Role]Kind{
	schema.RoleTokenBucket:   Bucket,
	schema.RoleCounterWindow: Window,
	schema.RoleCounter:       Counter,
	schema.RoleSlidingWindow: Sliding,
	schema.RoleBucket4j:      Bucket4j,
	schema.RoleLock:          Lock,
	schema.RoleCooldown:      Cooldown,
}

// IsLimit is true for the kinds the Rate limits page shows.
func (k Kind) IsLimit() bool {
	return k == Bucket || k == Window || k == Counter || k == Sliding || k == Bucket4j
}

// IsLock is true for the kinds the Locks page shows.
func (k Kind) IsLock() bool { return k == Lock || k == Cooldown }

// Row is one key as the sweep last read it. Times are measured from ReadAt;
// At gives the row's state at any later time.
type Row struct {
	DB     int
	Key    string
	Family *schema.Family
	Vars   []schema.Var
	ReadAt time.Time
	PTTL   time.Duration // at ReadAt; negative: no expiry
	Err    string        // why the value could not be read as its role says

	// Bucket: the stored fields.
	Stored  float64
	LastMs  float64
	HasLast bool
	// Window, Counter: the count.
	Count int64
	// Sliding: events within the window at ReadAt, all members, and the
	// lock the window sets.
	InWindow, Total int64
	LockKey         string
	Locked          bool
	LockValue       string
	LockPTTL        time.Duration
	// Bucket4j: the state's bytes, decoded (and refilled) at every At.
	State []byte
	// Lock, Cooldown: the start of the value (never of a sensitive family).
	Holder    string
	HolderCut bool
}

// State is a row at one moment.
type State struct {
	Used, Limit float64 // tokens taken of capacity, count or events of the limit
	Tokens      float64 // Bucket: tokens left now
	Throttled   bool    // the next request is refused (or the login is locked)
	Locked      bool    // Sliding: its lock is present
	Until       time.Time
	ResetsIn    time.Duration // until the limit lifts or the bucket is full; 0 unknown
	TTL         time.Duration // Lock/Cooldown: left now; negative: none
	Age         time.Duration // Lock: since it was taken, from the pack's TTL; 0 unknown
	NoTTL       bool          // Lock/Cooldown: a violation, it never expires
	// OverMax: Lock/Cooldown: a violation, the TTL left exceeds the
	// family's maximum (taken with a longer TTL than the pack says).
	OverMax bool
	Gone    bool // the key expired since it was read
}

// Fraction is Used/Limit, 0..1.
func (s State) Fraction() float64 {
	if s.Limit <= 0 {
		return 0
	}
	return math.Max(0, math.Min(1, s.Used/s.Limit))
}

// Severity orders rows: throttled or locked first, then nearest to the
// limit; for locks, those without a TTL or above their maximum TTL first,
// then the oldest.
func (s State) Severity() float64 {
	switch {
	case s.Gone:
		return -1
	case s.NoTTL || s.OverMax:
		return 3
	case s.Throttled || s.Locked:
		return 2 + s.Fraction()
	}
	return s.Fraction()
}

func left(ttl, elapsed time.Duration) time.Duration {
	if ttl < 0 {
		return ttl
	}
	return max(0, ttl-elapsed)
}

// At is the row's state at now: a bucket refilled by the pack's rate, a
// window and a lock whose TTL ran on.
func (r Row) At(now time.Time) State {
	var s State
	el := max(0, now.Sub(r.ReadAt))
	if r.PTTL >= 0 && el >= r.PTTL && r.PTTL > 0 {
		s.Gone = true
	}
	if r.Err != "" {
		return s
	}
	if r.Family.Role == schema.RoleBucket4j {
		return r.bucket4jAt(s, now)
	}
	switch p := r.Family.Params.(type) {
	case *schema.TokenBucketParams:
		return r.bucketAt(s, p, now)
	case *schema.CounterWindowParams:
		return r.countAt(s, p.Limit, r.Count >= p.Limit, el)
	case *schema.CounterParams:
		return r.countAt(s, p.Limit, p.Limit > 0 && r.Count >= p.Limit, el)
	case *schema.SlidingWindowParams:
		s.Limit, s.Used = float64(p.Limit), float64(r.InWindow)
		s.Throttled = r.InWindow >= p.Limit
		if r.Locked && !(r.LockPTTL > 0 && el >= r.LockPTTL) {
			s.Locked, s.Throttled = true, true
			if ms, err := strconv.ParseInt(strings.TrimSpace(r.LockValue), 10, 64); err == nil && ms > 0 {
				s.Until = time.UnixMilli(ms).UTC()
			}
			if r.LockPTTL > 0 {
				s.ResetsIn = left(r.LockPTTL, el)
			}
		}
		return s
	}
	return r.lockAt(s, el) // lock, cooldown
}

// bucket4jAt is a Bucket4j state decoded and refilled at now: its
// limiting bandwidth, the one with the fewest tokens left.
func (r Row) bucket4jAt(s State, now time.Time) State {
	b, err := decode.DecodeBucket4j(r.State, now)
	if err != nil || len(b.Bandwidths) == 0 {
		return s
	}
	lim := b.Bandwidths[0]
	for _, bw := range b.Bandwidths[1:] {
		if bw.Tokens < lim.Tokens {
			lim = bw
		}
	}
	s.Tokens, s.Limit = float64(b.Tokens), float64(lim.Capacity)
	s.Used = s.Limit - max(0, s.Tokens)
	s.Throttled = b.Tokens < 1
	s.ResetsIn = b.ToFull
	return s
}

// bucketAt is a token bucket refilled to now; an expired bucket is a full one.
func (r Row) bucketAt(s State, p *schema.TokenBucketParams, now time.Time) State {
	s.Tokens = decode.TokensNow(p, r.Stored, r.LastMs, r.HasLast, now)
	s.Limit, s.Used = p.Capacity, p.Capacity-s.Tokens
	s.Throttled = s.Tokens < p.Requested
	if p.RefillPerMs > 0 {
		need := p.Capacity - s.Tokens
		if s.Throttled {
			need = p.Requested - s.Tokens
		}
		s.ResetsIn = time.Duration(math.Ceil(need/p.RefillPerMs)) * time.Millisecond
	}
	if s.Gone {
		s.Tokens, s.Used, s.Throttled, s.ResetsIn = p.Capacity, 0, false, 0
	}
	return s
}

// countAt is a counter or fixed window against limit (throttled: at it),
// el after its read.
func (r Row) countAt(s State, limit int64, throttled bool, el time.Duration) State {
	s.Limit, s.Used = float64(limit), float64(r.Count)
	s.Throttled = throttled
	if r.PTTL > 0 {
		s.ResetsIn = left(r.PTTL, el)
	}
	if s.Gone {
		s.Used, s.Throttled, s.ResetsIn = 0, false, 0
	}
	return s
}

// lockAt is a lock or cooldown el after its read: its TTL left, and its
// age from the pack's TTL maximum (oldest first).
func (r Row) lockAt(s State, el time.Duration) State {
	s.TTL = left(r.PTTL, el)
	s.NoTTL = r.PTTL < 0
	s.OverMax = r.Family.TTL.Max > 0 && s.TTL > r.Family.TTL.Max
	if lp, ok := r.Family.Params.(*schema.LockParams); ok && lp.Value == "epoch-ms" {
		if ms, err := strconv.ParseInt(strings.TrimSpace(r.Holder), 10, 64); err == nil && ms > 0 {
			s.Until = time.UnixMilli(ms).UTC()
		}
	}
	if m := r.Family.TTL.Max; m > 0 && r.PTTL >= 0 && r.PTTL <= m {
		s.Age = m - s.TTL
		s.Used, s.Limit = float64(s.Age), float64(m)
	}
	s.Locked = !s.Gone
	return s
}

// Matches reports whether the row's placeholder values (decoded: an
// account in base64 is matched as its text) or its key contain q,
// ignoring case. An empty q matches every row.
func (r Row) Matches(q string) bool {
	q = strings.TrimSpace(q)
	if q == "" {
		return true
	}
	lq := strings.ToLower(q)
	for _, v := range r.Vars {
		if strings.Contains(strings.ToLower(v.Value), lq) || strings.Contains(strings.ToLower(v.Raw), lq) {
			return true
		}
	}
	return false
}

// Sort orders rows most constrained first at now; ties by key, so the
// order is stable from tick to tick.
func Sort(rows []Row, now time.Time) {
	sev := make(map[string]float64, len(rows))
	for i := range rows {
		sev[rows[i].Key] = rows[i].At(now).Severity()
	}
	slices.SortStableFunc(rows, func(a, b Row) int {
		sa, sb := sev[a.Key], sev[b.Key]
		switch {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
}
