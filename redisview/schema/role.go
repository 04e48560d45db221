package schema

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Role says what a key family is for. The UI chooses its semantic view by
// role, never by key prefix, so the set is closed: a pack naming an unknown
// role fails to load rather than silently losing its view.
type Role string

const (
	RoleCache            Role = "cache"             // derived data with a lifetime; safe to delete
	RoleConfig           Role = "config"            // settings the application reads
	RoleRecord           Role = "record"            // application data kept for a lifetime (order details)
	RoleIndex            Role = "index"             // members or value name other keys (params.of)
	RoleCounter          Role = "counter"           // INCR counter whose lifetime is set elsewhere
	RoleCounterWindow    Role = "counter-window"    // INCR + EXPIRE fixed window against a limit
	RoleTokenBucket      Role = "token-bucket"      // HASH of tokens and last refill time
	RoleSlidingWindow    Role = "sliding-window"    // ZSET of event timestamps
	RoleLock             Role = "lock"              // SET NX lock; the value names the holder or the unlock time
	RoleCooldown         Role = "cooldown"          // existence blocks an action until it expires
	RoleBloom            Role = "bloom"             // bitmap bloom filter
	RoleBloomMembers     Role = "bloom-members"     // the exact set beside a bloom
	RoleLeaderboard      Role = "leaderboard"       // ZSET of member → score
	RoleLeaderboardMeta  Role = "leaderboard-meta"  // HASH with one leaderboard row's details
	RoleBalance          Role = "balance"           // decimal amount of money or credit
	RoleQuota            Role = "quota"             // counter against a limit per calendar period
	RoleReservation      Role = "reservation"       // amount held until reconciled; must expire
	RoleConcurrencySet   Role = "concurrency-set"   // SET of in-flight request ids
	RoleBreakerHint      Role = "breaker-hint"      // advisory circuit-breaker state
	RoleIdempotency      Role = "idempotency"       // marks an operation as done
	RoleNonce            Role = "nonce"             // one-time value against replay
	RoleSession          Role = "session"           // state of one user session or game
	RoleChallenge        Role = "challenge"         // a CAPTCHA challenge or its binding
	RoleTicket           Role = "ticket"            // short-lived token proving a passed check
	RoleVerificationCode Role = "verification-code" // (hashed) code sent to a user
	RoleSecret           Role = "secret"            // key material; always sensitive
	RoleStats            Role = "stats"             // cumulative usage counters
	RoleBucket4j         Role = "bucket4j"          // Bucket4j serialized bucket state (BUCKET4J-STATE.md)
)

type roleInfo struct {
	types  []string   // Redis types the role's reader understands; nil: any
	params func() any // fresh params struct; nil: the role takes none
}

var roles = map[Role]roleInfo{
	RoleCache:            {},
	RoleConfig:           {},
	RoleRecord:           {},
	RoleIndex:            {params: func() any { return &IndexParams{} }},
	RoleCounter:          {types: []string{"string"}, params: func() any { return &CounterParams{} }},
	RoleCounterWindow:    {types: []string{"string"}, params: func() any { return &CounterWindowParams{} }},
	RoleTokenBucket:      {types: []string{"hash"}, params: func() any { return &TokenBucketParams{} }},
	RoleSlidingWindow:    {types: []string{"zset"}, params: func() any { return &SlidingWindowParams{} }},
	RoleLock:             {types: []string{"string"}, params: func() any { return &LockParams{} }},
	RoleCooldown:         {types: []string{"string"}},
	RoleBloom:            {types: []string{"string"}, params: func() any { return &BloomParams{} }},
	RoleBloomMembers:     {types: []string{"set"}, params: func() any { return &BloomMembersParams{} }},
	RoleLeaderboard:      {types: []string{"zset"}, params: func() any { return &LeaderboardParams{} }},
	RoleLeaderboardMeta:  {types: []string{"hash"}, params: func() any { return &LeaderboardMetaParams{} }},
	RoleBalance:          {types: []string{"string"}, params: func() any { return &BalanceParams{} }},
	RoleQuota:            {types: []string{"string"}, params: func() any { return &QuotaParams{} }},
	RoleReservation:      {types: []string{"string"}, params: func() any { return &ReservationParams{} }},
	RoleConcurrencySet:   {types: []string{"set"}, params: func() any { return &ConcurrencySetParams{} }},
	RoleBreakerHint:      {types: []string{"string"}},
	RoleIdempotency:      {types: []string{"string"}},
	RoleNonce:            {types: []string{"string"}},
	RoleSession:          {},
	RoleChallenge:        {},
	RoleTicket:           {types: []string{"string"}},
	RoleVerificationCode: {types: []string{"string"}},
	RoleSecret:           {types: []string{"string"}},
	RoleStats:            {params: func() any { return &StatsParams{} }},
	RoleBucket4j:         {types: []string{"string"}},
}

// Roles lists every known role in a stable order.
func Roles() []Role {
	out := make([]Role, 0, len(roles))
	for r := range roles {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// Redis types as TYPE reports them; a bitmap is a string.
var redisTypes = []string{"string", "hash", "list", "set", "zset", "stream"}

// Ref points from one family to a companion family (a bloom's exact set, a
// leaderboard's row metadata). It is written as the companion's pattern, with
// placeholder names chosen by the referring family so that Key can be filled
// from the referrer's own values: a leaderboard `mg:score:leaderboard:{gameId}`
// with member `userId` names its meta as `mg:score:user-meta:{gameId}:{userId}`.
type Ref struct {
	Pattern *Pattern // as written in the reference
	Family  *Family  // the family with that pattern's shape
	text    string
}

func (r *Ref) String() string {
	if r == nil {
		return ""
	}
	return r.text
}

// Key builds the companion's key from values named as in the reference.
func (r *Ref) Key(vars map[string]string) (string, error) {
	vals := make([]string, len(r.Pattern.phs))
	for i, ph := range r.Pattern.phs {
		v, ok := vars[ph.Name]
		if !ok {
			return "", fmt.Errorf("no value for {%s}", ph.Name)
		}
		vals[i] = v
	}
	return r.Family.Pattern.keyFrom(vals)
}

// CounterParams: role counter.
type CounterParams struct {
	Limit    int64  `yaml:"limit"`     // 0: no limit
	OnExceed string `yaml:"on_exceed"` // reject (default), captcha or lock
	Counts   string `yaml:"counts"`    // "" or requests (default), or failures: support may clear it
}

// CounterWindowParams: role counter-window, an INCR whose first hit sets
// the TTL, so the window is fixed, not sliding.
type CounterWindowParams struct {
	Limit    int64         `yaml:"limit"`
	Window   time.Duration `yaml:"window"`
	Calendar string        `yaml:"calendar"`  // "", day or month: the window ends at a calendar boundary
	TimeZone string        `yaml:"timezone"`  // of the calendar: UTC or ±HH:MM
	OnExceed string        `yaml:"on_exceed"` // reject (default), captcha or lock
	Counts   string        `yaml:"counts"`    // "" or requests (default), or failures: support may clear it
}

// TokenBucketParams: role token-bucket. Current tokens at time t are
// min(capacity, tokens + (t − time_field) × refill_per_ms).
type TokenBucketParams struct {
	Capacity     float64       `yaml:"capacity"`
	Window       time.Duration `yaml:"window"`         // time an empty bucket takes to fill
	RefillPerMs  float64       `yaml:"refill_per_ms"`  // tokens per millisecond
	RefillPerSec float64       `yaml:"refill_per_sec"` // alternative spelling; both are filled in after loading
	Requested    float64       `yaml:"requested"`      // tokens one request takes (default 1)
	TokensField  string        `yaml:"tokens_field"`   // default "tokens"
	TimeField    string        `yaml:"time_field"`     // default "ts"
	TimeUnit     string        `yaml:"time_unit"`      // of time_field: ms (default) or s
}

// SlidingWindowParams: role sliding-window, a ZSET of events scored by time.
type SlidingWindowParams struct {
	Limit     int64         `yaml:"limit"`
	Window    time.Duration `yaml:"window"`
	ScoreUnit string        `yaml:"score_unit"` // ms (default) or s
	Lock      *Ref          `yaml:"lock"`       // the lock set when the limit is exceeded
	LockFor   time.Duration `yaml:"lock_for"`
}

// LockParams: role lock.
type LockParams struct {
	// Value is what the holder writes: "uuid" (a holder id), "1", or
	// "epoch-ms" (the unlock time in epoch milliseconds).
	Value string `yaml:"value"`
	// Hold is how long a holder is expected to keep the lock; a lock older
	// than that is shown as held too long. 0: not given.
	Hold time.Duration `yaml:"hold"`
}

// BloomParams: role bloom.
type BloomParams struct {
	Bits    int64  `yaml:"bits"`
	Hashes  int    `yaml:"hashes"`
	Scheme  string `yaml:"scheme"`  // crc32-javahash-double (DESIGN.md)
	Members *Ref   `yaml:"members"` // the exact set, if any
	// Purpose is what the application uses the bloom for: "filter" (the
	// default: a cache-penetration filter, shown read-only) or "ban" (a
	// ban list: support may ban and unban names through it).
	Purpose string `yaml:"purpose"`
}

// BloomMembersParams: role bloom-members.
type BloomMembersParams struct {
	Bloom *Ref `yaml:"bloom"`
}

// LeaderboardParams: role leaderboard.
type LeaderboardParams struct {
	Retained  int    `yaml:"retained"`   // entries kept after pruning; 0: unbounded
	Order     string `yaml:"order"`      // desc (default: highest first) or asc
	Member    string `yaml:"member"`     // placeholder name a member fills in meta and high_score
	Meta      *Ref   `yaml:"meta"`       // per-row details
	HighScore *Ref   `yaml:"high_score"` // per-member cached best score
}

// LeaderboardMetaParams: role leaderboard-meta.
type LeaderboardMetaParams struct {
	Leaderboard *Ref     `yaml:"leaderboard"`
	Fields      []string `yaml:"fields"`
	// Labels titles a field's column ("durationMs" → "Duration"); a field
	// without one is titled by its name.
	Labels map[string]string `yaml:"labels"`
	// Formats says what a field's value means, so it is shown that way:
	// one of MetaFormats.
	Formats map[string]string `yaml:"formats"`
}

// MetaFormats are the meanings a leaderboard-meta field may be given.
var MetaFormats = []string{MetaDurationMs, MetaEpochMs, MetaCount, MetaText}

const (
	MetaDurationMs = "duration-ms" // milliseconds, shown as a duration
	MetaEpochMs    = "epoch-ms"    // Unix time in ms, shown as a date and time
	MetaCount      = "count"       // an integer, shown with digit grouping
	MetaText       = "text"        // shown as it is
)

// BalanceParams: role balance.
type BalanceParams struct {
	Scale int    `yaml:"scale"` // decimal places the application writes
	Unit  string `yaml:"unit"`
}

// QuotaParams: role quota, a counter against a limit per calendar period.
type QuotaParams struct {
	Limit    int64  `yaml:"limit"` // 0: set per subject elsewhere
	Period   string `yaml:"period"`
	Unit     string `yaml:"unit"`
	TimeZone string `yaml:"timezone"`
}

// ReservationParams: role reservation.
type ReservationParams struct {
	Unit   string `yaml:"unit"`
	Budget *Ref   `yaml:"budget"` // the quota the reservation is charged to
}

// ConcurrencySetParams: role concurrency-set.
type ConcurrencySetParams struct {
	Limit int64 `yaml:"limit"` // 0: a deployment setting
}

// StatsParams: role stats.
type StatsParams struct {
	Fields   []string `yaml:"fields"`
	Registry *Ref     `yaml:"registry"` // the set naming every stats key
}

// IndexParams: role index. Each member (set, zset, list) or the value
// (string) fills the single placeholder of Of.
type IndexParams struct {
	Of *Ref `yaml:"of"`
}

// check validates decoded params and fills defaults; f is the owning family.
func checkParams(f *Family, p any) error {
	oneOf := func(field, v string, allowed ...string) error {
		if !slices.Contains(allowed, v) {
			return fmt.Errorf("%s %q: want one of %s", field, v, strings.Join(allowed, ", "))
		}
		return nil
	}
	switch p := p.(type) {
	case *CounterParams:
		if p.Limit < 0 {
			return fmt.Errorf("limit %d is negative", p.Limit)
		}
		if err := oneOf("counts", p.Counts, "", "requests", "failures"); err != nil {
			return err
		}
		return oneOf("on_exceed", p.OnExceed, "", "reject", "captcha", "lock")
	case *CounterWindowParams:
		if err := oneOf("counts", p.Counts, "", "requests", "failures"); err != nil {
			return err
		}
		if p.Limit <= 0 {
			return fmt.Errorf("limit is required and must be positive")
		}
		if err := oneOf("calendar", p.Calendar, "", "day", "month"); err != nil {
			return err
		}
		if p.Window <= 0 && p.Calendar == "" {
			return fmt.Errorf("window is required (or calendar: day|month)")
		}
		if _, err := zone(p.TimeZone); err != nil {
			return err
		}
		return oneOf("on_exceed", p.OnExceed, "", "reject", "captcha", "lock")
	case *TokenBucketParams:
		return p.check()
	case *SlidingWindowParams:
		if p.Limit <= 0 || p.Window <= 0 {
			return fmt.Errorf("limit and window are required and must be positive")
		}
		if p.ScoreUnit == "" {
			p.ScoreUnit = "ms"
		}
		if p.LockFor < 0 {
			return fmt.Errorf("lock_for is negative")
		}
		return oneOf("score_unit", p.ScoreUnit, "ms", "s")
	case *LockParams:
		if p.Hold < 0 {
			return fmt.Errorf("hold is negative")
		}
		return oneOf("value", p.Value, "uuid", "1", "epoch-ms")
	case *BloomParams:
		if p.Bits <= 0 {
			return fmt.Errorf("bits is required and must be positive")
		}
		if p.Hashes < 1 || p.Hashes > 64 {
			return fmt.Errorf("hashes %d out of range 1..64", p.Hashes)
		}
		if p.Scheme == "" {
			p.Scheme = "crc32-javahash-double"
		}
		if p.Purpose == "" {
			p.Purpose = "filter"
		}
		if err := oneOf("purpose", p.Purpose, "filter", "ban"); err != nil {
			return err
		}
		return oneOf("scheme", p.Scheme, "crc32-javahash-double")
	case *BloomMembersParams:
		if p.Bloom == nil {
			return fmt.Errorf("bloom is required")
		}
	case *LeaderboardParams:
		if p.Retained < 0 {
			return fmt.Errorf("retained %d is negative", p.Retained)
		}
		if p.Order == "" {
			p.Order = "desc"
		}
		if err := oneOf("order", p.Order, "desc", "asc"); err != nil {
			return err
		}
		if (p.Meta != nil || p.HighScore != nil) && !validName(p.Member) {
			return fmt.Errorf("member names the placeholder a leaderboard member fills in meta and high_score; it is required with them")
		}
	case *LeaderboardMetaParams:
		for _, m := range []map[string]string{p.Labels, p.Formats} {
			for f := range m {
				if len(p.Fields) > 0 && !slices.Contains(p.Fields, f) {
					return fmt.Errorf("%q has a label or format but is not one of fields %v", f, p.Fields)
				}
			}
		}
		for f, l := range p.Labels {
			if strings.TrimSpace(l) == "" {
				return fmt.Errorf("label of %q is empty", f)
			}
		}
		for f, m := range p.Formats {
			if err := oneOf("formats."+f, m, MetaFormats...); err != nil {
				return err
			}
		}
	case *BalanceParams:
		if p.Scale < 0 || p.Scale > 18 {
			return fmt.Errorf("scale %d out of range 0..18", p.Scale)
		}
	case *QuotaParams:
		if p.Limit < 0 {
			return fmt.Errorf("limit %d is negative", p.Limit)
		}
		if err := oneOf("period", p.Period, "day", "month"); err != nil {
			return err
		}
		if _, err := zone(p.TimeZone); err != nil {
			return err
		}
	case *ConcurrencySetParams:
		if p.Limit < 0 {
			return fmt.Errorf("limit %d is negative", p.Limit)
		}
	}
	return nil
}

func (p *TokenBucketParams) check() error {
	if p.Capacity <= 0 {
		return fmt.Errorf("capacity is required and must be positive")
	}
	if p.RefillPerMs < 0 || p.RefillPerSec < 0 || p.Window < 0 {
		return fmt.Errorf("window and refill rates must be positive")
	}
	if p.RefillPerMs > 0 && p.RefillPerSec > 0 {
		return fmt.Errorf("give refill_per_ms or refill_per_sec, not both")
	}
	if p.RefillPerSec > 0 {
		p.RefillPerMs = p.RefillPerSec / 1000
	}
	fromWindow := 0.0
	if p.Window > 0 {
		fromWindow = p.Capacity / float64(p.Window.Milliseconds())
	}
	switch {
	case p.RefillPerMs == 0 && fromWindow == 0:
		return fmt.Errorf("give window or a refill rate")
	case p.RefillPerMs == 0:
		p.RefillPerMs = fromWindow
	case fromWindow == 0:
		p.Window = time.Duration(p.Capacity / p.RefillPerMs * float64(time.Millisecond))
	case math.Abs(p.RefillPerMs-fromWindow) > 1e-9*fromWindow:
		return fmt.Errorf("refill %g/ms disagrees with capacity/window = %g/ms", p.RefillPerMs, fromWindow)
	}
	p.RefillPerSec = p.RefillPerMs * 1000
	if p.Requested == 0 {
		p.Requested = 1
	}
	if p.Requested < 0 {
		return fmt.Errorf("requested is negative")
	}
	if p.TokensField == "" {
		p.TokensField = "tokens"
	}
	if p.TimeField == "" {
		p.TimeField = "ts"
	}
	if p.TimeUnit == "" {
		p.TimeUnit = "ms"
	}
	if p.TimeUnit != "ms" && p.TimeUnit != "s" {
		return fmt.Errorf("time_unit %q: want ms or s", p.TimeUnit)
	}
	return nil
}

// zone parses the time zones packs may name: UTC, Z, or a fixed offset.
// IANA names are refused because the host may lack tzdata, and a calendar
// window silently computed in the wrong zone is worse than a load error.
func zone(s string) (*time.Location, error) {
	switch s {
	case "", "UTC", "Z":
		return time.UTC, nil
	}
	if len(s) == 6 && (s[0] == '+' || s[0] == '-') && s[3] == ':' && allDigits(s[1:3]) && allDigits(s[4:]) {
		h, m := int(s[1]-'0')*10+int(s[2]-'0'), int(s[4]-'0')*10+int(s[5]-'0')
		if h <= 14 && m < 60 {
			off := (h*60 + m) * 60
			if s[0] == '-' {
				off = -off
			}
			return time.FixedZone(s, off), nil
		}
	}
	return nil, fmt.Errorf("timezone %q: want UTC or an offset like +08:00", s)
}

// Location is the zone of a calendar window (UTC when none is given).
func (p *CounterWindowParams) Location() *time.Location { l, _ := zone(p.TimeZone); return l }

// Location is the zone the quota period is counted in (UTC when none is given).
func (p *QuotaParams) Location() *time.Location { l, _ := zone(p.TimeZone); return l }
