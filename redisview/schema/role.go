package schema

import (
	"fmt"
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

// RoleSpec is what the loader knows of a role: the Redis types its
// reader understands (nil: any) and a fresh params struct (nil: the role
// takes none). A params struct validates itself and fills its defaults in
// Check, so the loader holds no per-role code.
type RoleSpec struct {
	Types  []string
	Params func() Params
	// Plain: its values are application data no decoder reads, which a
	// page may show as written (cut to a few bytes) beside the key.
	Plain bool
}

// Params is a role's parameters, decoded from the pack.
type Params interface {
	// Check validates the decoded params and fills defaults; f is the
	// owning family.
	Check(f *Family) error
}

type roleInfo struct {
	types  []string
	params func() any
	plain  bool
}

// roles is the registry of roles the loader accepts: the roles defined
// here, and those a domain package registers with RegisterRole.
var roles = map[Role]roleInfo{}

// RegisterRole adds a role to the set packs may name. It is called from
// the init of the role's own file and panics on a second registration, as
// database/sql drivers do.
func RegisterRole(r Role, spec RoleSpec) {
	if _, dup := roles[r]; dup {
		panic("schema: role " + string(r) + " registered twice")
	}
	info := roleInfo{types: spec.Types, plain: spec.Plain}
	if spec.Params != nil {
		info.params = func() any { return spec.Params() }
	}
	roles[r] = info
}

func init() {
	for r, spec := range map[Role]RoleSpec{
		RoleCache:            {Plain: true},
		RoleConfig:           {},
		RoleRecord:           {Plain: true},
		RoleIndex:            {Params: func() Params { return &IndexParams{} }, Plain: true},
		RoleCounter:          {Types: []string{"string"}, Params: func() Params { return &CounterParams{} }},
		RoleCounterWindow:    {Types: []string{"string"}, Params: func() Params { return &CounterWindowParams{} }},
		RoleTokenBucket:      {Types: []string{"hash"}, Params: func() Params { return &TokenBucketParams{} }},
		RoleSlidingWindow:    {Types: []string{"zset"}, Params: func() Params { return &SlidingWindowParams{} }},
		RoleLock:             {Types: []string{"string"}, Params: func() Params { return &LockParams{} }},
		RoleCooldown:         {Types: []string{"string"}},
		RoleBloom:            {Types: []string{"string"}, Params: func() Params { return &BloomParams{} }},
		RoleBloomMembers:     {Types: []string{"set"}, Params: func() Params { return &BloomMembersParams{} }},
		RoleLeaderboard:      {Types: []string{"zset"}, Params: func() Params { return &LeaderboardParams{} }},
		RoleLeaderboardMeta:  {Types: []string{"hash"}, Params: func() Params { return &LeaderboardMetaParams{} }},
		RoleBalance:          {Types: []string{"string"}, Params: func() Params { return &BalanceParams{} }},
		RoleQuota:            {Types: []string{"string"}, Params: func() Params { return &QuotaParams{} }},
		RoleReservation:      {Types: []string{"string"}, Params: func() Params { return &ReservationParams{} }},
		RoleConcurrencySet:   {Types: []string{"set"}, Params: func() Params { return &ConcurrencySetParams{} }},
		RoleBreakerHint:      {Types: []string{"string"}},
		RoleIdempotency:      {Types: []string{"string"}},
		RoleNonce:            {Types: []string{"string"}},
		RoleSession:          {Plain: true},
		RoleChallenge:        {Plain: true},
		RoleTicket:           {Types: []string{"string"}, Plain: true},
		RoleVerificationCode: {Types: []string{"string"}},
		RoleSecret:           {Types: []string{"string"}},
		RoleStats:            {Params: func() Params { return &StatsParams{} }},
		RoleBucket4j:         {Types: []string{"string"}},
	} {
		RegisterRole(r, spec)
	}
}

// Plain reports a role whose values a page may show as written
// (RoleSpec.Plain).
func Plain(r Role) bool { return roles[r].plain }

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

// checkParams validates decoded params through their own Check.
func checkParams(f *Family, p any) error {
	if c, ok := p.(Params); ok {
		return c.Check(f)
	}
	return nil
}

// oneOf refuses a value that is not among the allowed ones.
func oneOf(field, v string, allowed ...string) error {
	if !slices.Contains(allowed, v) {
		return fmt.Errorf("%s %q: want one of %s", field, v, strings.Join(allowed, ", "))
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
