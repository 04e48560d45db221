package apiv1

import (
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
)

// LimitsPage mirrors the Rate limits page (handlers/limits.go): every
// rate-limit family of the connection's pack with its most constrained
// rows, as the connection's sweep holds them. Meant for
// GET /api/v1/connections/{conn}/limits?q=FILTER.
type LimitsPage struct {
	Conn     string            `json:"conn" doc:"The connection's name." example:"eisland"`
	Redis    RedisState        `json:"redis" doc:"Whether the server answers; when down the rows are as last read."`
	Pack     PackState         `json:"pack" doc:"The schema pack that says which keys are rate limits."`
	Sweep    RowSweep          `json:"sweep" doc:"What the sweep has read: families not read yet have unknown rows, which is not none."`
	Filter   Name              `json:"filter" doc:"The filter applied to the rows' placeholder values (\"\": none), byte-exact."`
	Families List[LimitFamily] `json:"families" doc:"Families with a throttled row first, then in the pack's order; a filter keeps those it matches a row of. Families not read yet are in sweep.not_read, not here."`
	Error    string            `json:"error,omitempty" doc:"The sweep's last error; absent when its last step succeeded."`
}

// Sweep states of a Rate limits or Locks page.
const (
	SweepStarting  = "starting"
	SweepFirstPass = "first_pass"
	SweepSwept     = "swept"
	SweepNoFamily  = "no_family"
)

// RowSweep is what the per-connection sweep of limits and locks has read.
type RowSweep struct {
	State        string      `json:"state" enum:"starting,first_pass,swept,no_family" doc:"starting: the sweep has not taken the pack up yet, or the pack is still being matched (every family unread); first_pass: some family has not completed a pass; swept: every family was swept at least once (the sweep runs on); no_family: the pack has no family of this page (or there is no pack)."`
	Families     int         `json:"families" minimum:"0" doc:"Families of this page the sweep walks."`
	FamiliesRead int         `json:"families_read" minimum:"0" doc:"Of them, those with at least one completed pass."`
	NotRead      []FamilyRef `json:"not_read" nullable:"false" doc:"Families the sweep has not reached yet: their rows are not known."`
	Budget       SweepBudget `json:"budget" doc:"What the sweep may cost the server."`
}

// SweepBudget bounds the limits and locks sweep.
type SweepBudget struct {
	KeysPerSec int   `json:"keys_per_sec" minimum:"0" doc:"Average keys examined (SCAN) and read per second." example:"10000"`
	ScanCount  int   `json:"scan_count" minimum:"0" doc:"SCAN COUNT per step." example:"200"`
	Keep       int   `json:"keep" minimum:"0" doc:"Rows kept per family and database: the most constrained." example:"50"`
	RefreshMs  int64 `json:"refresh_ms" minimum:"0" doc:"Kept rows are re-read this often." example:"2000"`
}

// Kept states: which of a family's keys its rows are.
const (
	KeptRunning = "first_pass"
	KeptCut     = "cut"
	KeptAll     = "all"
)

// KeptRows says which of a family's keys its rows are.
type KeptRows struct {
	State string `json:"state" enum:"first_pass,cut,all" doc:"first_pass: the keys found so far (of found) while the first pass runs; cut: the most constrained of about of keys; all: every one of of keys."`
	Found int64  `json:"found,omitempty" minimum:"0" doc:"Keys found so far; only while first_pass."`
	Of    int64  `json:"of,omitempty" minimum:"0" doc:"Keys of the family found by the last completed pass; absent while first_pass."`
}

// LimitFamily is one rate-limit family in one database.
type LimitFamily struct {
	FamilyRef
	Policy    LimitPolicy `json:"policy" doc:"The pack's limit for the family."`
	Kept      KeptRows    `json:"kept"`
	Throttled int         `json:"throttled" minimum:"0" doc:"Rows shown throttled (or locked) now."`
	Hidden    int         `json:"hidden" minimum:"0" doc:"Rows kept that do not match the filter."`
	Rows      []LimitRow  `json:"rows" nullable:"false" doc:"The rows matching the filter, most constrained first."`
}

// LimitPolicy is the pack's limit of a family; each field is absent when
// the family's role has no such parameter.
type LimitPolicy struct {
	Capacity     *float64 `json:"capacity,omitempty" doc:"Token bucket: its capacity."`
	RefillPerSec *float64 `json:"refill_per_sec,omitempty" doc:"Token bucket: tokens added per second."`
	FullInMs     *int64   `json:"full_in_ms,omitempty" doc:"Token bucket: time an empty bucket takes to fill."`
	Limit        *int64   `json:"limit,omitempty" doc:"Counter, fixed or sliding window: the count at which requests are refused."`
	WindowMs     *int64   `json:"window_ms,omitempty" doc:"Fixed or sliding window: its length (absent for a calendar window)."`
	Calendar     string   `json:"calendar,omitempty" enum:"day,month" doc:"Fixed window ending at a calendar boundary."`
	TimeZone     string   `json:"time_zone,omitempty" doc:"The calendar's time zone."`
	OnExceed     string   `json:"on_exceed,omitempty" doc:"What the application does past the limit (reject, captcha, lock)."`
	LockForMs    *int64   `json:"lock_for_ms,omitempty" doc:"Sliding window: how long exceeding it locks."`
	PerState     bool     `json:"per_state" doc:"Bucket4j: each state carries its own bandwidths; the limiting one is shown per row."`
}

// Row states of the Rate limits page.
const (
	LimitOK         = "ok"
	LimitNear       = "near_limit"
	LimitThrottled  = "throttled"
	LimitLocked     = "locked"
	LimitUnreadable = "unreadable"
)

// LimitRow is one rate-limit key at the moment of the answer.
type LimitRow struct {
	Key         Name          `json:"key"`
	Subject     []Placeholder `json:"subject" nullable:"false" doc:"The key's placeholder values: who or what is limited."`
	State       string        `json:"state" enum:"ok,near_limit,throttled,locked,unreadable" doc:"throttled: the next request is refused; locked: the window's lock is set; near_limit: under 20% left; unreadable: the value is not what the role says, or not read (sensitive) — see error."`
	Used        *float64      `json:"used,omitempty" doc:"Tokens taken, or the count (events in the window); absent when unreadable."`
	Limit       *float64      `json:"limit,omitempty" doc:"Capacity or limit the row is measured against; absent when unreadable."`
	Tokens      *float64      `json:"tokens,omitempty" doc:"Token and Bucket4j buckets: tokens left now (refilled since the read); absent for counters."`
	LockedUntil *time.Time    `json:"locked_until,omitempty" doc:"When the lock lifts, as its value says; absent when not locked or not known."`
	ResetsInMs  *int64        `json:"resets_in_ms,omitempty" doc:"Until the limit lifts or the bucket is full; absent when not known."`
	TTLMs       int64         `json:"ttl_ms" doc:"Time to live left now; -1: none."`
	ReadAt      time.Time     `json:"read_at" doc:"When the sweep last read the key."`
	Error       string        `json:"error,omitempty" doc:"Why the value could not be read as its role says; absent when it was."`
	Actions     []KeyAction   `json:"actions" nullable:"false" doc:"The action that fixes the row (unlock-login, clear-failures, reset-limit), when the caller's role may run it: preview it with POST /api/v1/actions/preview {kind, conn, db: the family's, key}. Empty when none applies, the role may not, or the console does not act."`
}

// Offer is the action kind as the caller may run it, or false when the
// caller may not (or the console does not act). A nil Offer offers none.
type Offer func(kind string) (KeyAction, bool)

// offered is the row's fix kind as offer offers it: [] or one action.
func (offer Offer) offered(kind string) []KeyAction {
	if offer == nil || kind == "" {
		return []KeyAction{}
	}
	if ka, ok := offer(kind); ok {
		return []KeyAction{ka}
	}
	return []KeyAction{}
}

// Limits maps the Rate limits page's data: the connection's pack choice
// and status, its sweep's snapshot, ranked at now under filter.
// Each row offers the action that fixes it (action.Fix) as offer says.
func Limits(conn string, pc redisview.PackChoice, st redisview.Status, snap limits.Snapshot, filter string, now time.Time, offer Offer) LimitsPage {
	p := LimitsPage{Conn: conn, Redis: redisState(st), Pack: packState(pc), Filter: Name(filter), Error: snap.Err,
		Sweep: rowSweep(pc, snap, decode.ClassLimit), Families: list[LimitFamily](nil)}
	if p.Sweep.State == SweepStarting || p.Sweep.State == SweepNoFamily {
		return p
	}
	for _, f := range limits.RankLimits(snap, filter, now) {
		lf := LimitFamily{FamilyRef: familyRef(f.Family, f.DB), Policy: limitPolicy(f.Family), Kept: keptRows(f.FamilySnap, snap.Budget.Keep),
			Throttled: f.Throttled, Hidden: f.Hidden, Rows: make([]LimitRow, 0, len(f.Shown))}
		for _, rs := range f.Shown {
			row := limitRow(rs.Row, rs.State, now)
			if row.State != LimitUnreadable {
				row.Actions = offer.offered(action.Fix(rs.Row.Family, action.FixState{Locked: rs.State.Locked, Idle: rs.State.Used <= 0 && !rs.State.Throttled}))
			}
			lf.Rows = append(lf.Rows, row)
		}
		p.Families.Items = append(p.Families.Items, lf)
	}
	return p
}

// rowSweep says what the sweep has read of the families of kind k.
func rowSweep(pc redisview.PackChoice, snap limits.Snapshot, c decode.Class) RowSweep {
	b := snap.Budget
	s := RowSweep{NotRead: []FamilyRef{}, Budget: SweepBudget{KeysPerSec: b.KeysPerSec, ScanCount: b.Count, Keep: b.Keep, RefreshMs: Millis(b.Refresh)}}
	if pc.Pack == nil && pc.Why == "" { // still matching: which families is not known yet
		s.State = SweepStarting
		return s
	}
	if pc.Pack == nil || !packHas(pc.Pack, c) {
		s.State = SweepNoFamily
		return s
	}
	if snap.Pack != pc.Pack {
		s.State = SweepStarting
		for _, f := range pc.Pack.Families {
			if decode.ClassOf(f) == c {
				s.Families++
				for _, db := range f.DBs {
					s.NotRead = append(s.NotRead, familyRef(f, db))
				}
			}
		}
		return s
	}
	for _, f := range snap.Families {
		if f.Class != c {
			continue
		}
		s.Families++
		if f.Passes > 0 {
			s.FamiliesRead++
		}
		if f.NotRead() {
			s.NotRead = append(s.NotRead, familyRef(f.Family, f.DB))
		}
	}
	s.State = SweepSwept
	if s.FamiliesRead < s.Families {
		s.State = SweepFirstPass
	}
	return s
}

func packHas(p *schema.Pack, c decode.Class) bool {
	for _, f := range p.Families {
		if decode.ClassOf(f) == c {
			return true
		}
	}
	return false
}

func keptRows(f limits.FamilySnap, keep int) KeptRows {
	k := f.Kept(keep)
	switch {
	case k.Running:
		return KeptRows{State: KeptRunning, Found: k.Found}
	case k.Cut:
		return KeptRows{State: KeptCut, Of: k.Of}
	}
	return KeptRows{State: KeptAll, Of: k.Of}
}

func ptr[T any](v T) *T { return &v }

func limitPolicy(f *schema.Family) LimitPolicy {
	var p LimitPolicy
	if f.Role == schema.RoleBucket4j {
		p.PerState = true
	}
	switch q := f.Params.(type) {
	case *schema.TokenBucketParams:
		p.Capacity, p.RefillPerSec, p.FullInMs = ptr(q.Capacity), ptr(q.RefillPerSec), ptr(Millis(q.Window))
	case *schema.CounterWindowParams:
		p.Limit, p.OnExceed = ptr(q.Limit), q.OnExceed
		if q.Calendar != "" {
			p.Calendar, p.TimeZone = q.Calendar, q.Location().String()
		} else {
			p.WindowMs = ptr(Millis(q.Window))
		}
	case *schema.CounterParams:
		p.Limit, p.OnExceed = ptr(q.Limit), q.OnExceed
	case *schema.SlidingWindowParams:
		p.Limit, p.WindowMs = ptr(q.Limit), ptr(Millis(q.Window))
		if q.Lock != nil {
			p.LockForMs = ptr(Millis(q.LockFor))
		}
	}
	return p
}

// ttlAt is a TTL read at readAt, left at now; -1 none.
func ttlAt(pttl time.Duration, readAt, now time.Time) int64 {
	if pttl < 0 {
		return -1
	}
	return Millis(max(0, pttl-max(0, now.Sub(readAt))))
}

func limitRow(r *limits.Row, st limits.State, now time.Time) LimitRow {
	row := LimitRow{Actions: []KeyAction{}, Key: Name(r.Key), Subject: placeholders(r.Vars), TTLMs: ttlAt(r.PTTL, r.ReadAt, now), ReadAt: Time(r.ReadAt),
		LockedUntil: timePtr(st.Until), ResetsInMs: msPtr(st.ResetsIn, st.ResetsIn > 0)}
	if r.Err != "" || r.Family.Sensitive {
		row.State, row.Error = LimitUnreadable, r.Err
		if row.Error == "" {
			row.Error = "sensitive: the value is not read"
		}
		row.LockedUntil, row.ResetsInMs = nil, nil
		return row
	}
	row.Used, row.Limit = ptr(st.Used), ptr(st.Limit)
	if _, bucket := r.Family.Params.(*schema.TokenBucketParams); bucket || r.Family.Role == schema.RoleBucket4j {
		row.Tokens = ptr(st.Tokens)
	}
	switch {
	case st.Locked:
		row.State = LimitLocked
	case st.Throttled:
		row.State = LimitThrottled
	case st.Limit > 0 && (st.Limit-st.Used)/st.Limit < 0.2:
		row.State = LimitNear
	default:
		row.State = LimitOK
	}
	return row
}
