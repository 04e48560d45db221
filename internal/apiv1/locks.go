package apiv1

import (
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
)

// LocksPage mirrors the Locks page (handlers/locks.go): every lock and
// cooldown family of the connection's pack with the locks held, as the
// connection's sweep holds them. Meant for
// GET /api/v1/connections/{conn}/locks?q=FILTER.
type LocksPage struct {
	Conn     string           `json:"conn" doc:"The connection's name." example:"eisland"`
	Redis    RedisState       `json:"redis" doc:"Whether the server answers; when down the rows are as last read."`
	Pack     PackState        `json:"pack" doc:"The schema pack that says which keys are locks."`
	Sweep    RowSweep         `json:"sweep" doc:"What the sweep has read: families not read yet have unknown locks, which is not none."`
	Short    ShortLocks       `json:"short" doc:"Whether locks shorter than the sweep's interval are counted."`
	Filter   Name             `json:"filter" doc:"The filter applied to the rows' placeholder values (\"\": none), byte-exact."`
	Families List[LockFamily] `json:"families" doc:"Families holding locks first, then cooldowns, then families holding none, each in the pack's order. Families not read yet are in sweep.not_read, not here."`
	Error    string           `json:"error,omitempty" doc:"The sweep's last error; absent when its last step succeeded."`
}

// ShortLocks counts the locks that came and went between two reads of the
// sweep, where keyspace notifications tell of them.
type ShortLocks struct {
	Counted bool       `json:"counted" doc:"Keyspace notifications are on: short locks are counted. False: they may be missed (see why)."`
	Count   *int64     `json:"count,omitempty" minimum:"0" doc:"Locks that appeared and vanished between two reads since since; absent unless counted."`
	Since   *time.Time `json:"since,omitempty" doc:"Since when they are counted; absent unless counted."`
	Why     string     `json:"why,omitempty" doc:"Why they are not counted (the setting, or CONFIG refused); absent when counted or not known yet."`
}

// Lock value kinds: what a lock family's value says.
const (
	LockValueUUID     = "uuid"
	LockValueOne      = "1"
	LockValueEpochMs  = "epoch-ms"
	LockValueCooldown = "cooldown"
	LockValueUnknown  = "unknown"
)

// LockFamily is one lock or cooldown family in one database.
type LockFamily struct {
	FamilyRef
	Value    string    `json:"value" enum:"uuid,1,epoch-ms,cooldown,unknown" doc:"What a key's value is: the holder's id (uuid), a marker (1), the unlock time (epoch-ms); cooldown: the key blocks an action while it exists; unknown: the pack does not say."`
	MaxTTLMs *int64    `json:"max_ttl_ms,omitempty" doc:"The TTL the pack says locks are taken with, which ages are counted from; absent when the pack gives none (ages are then not known)."`
	HoldMs   *int64    `json:"hold_ms,omitempty" doc:"How long a holder is expected to keep the lock; absent when the pack does not say."`
	Kept     KeptRows  `json:"kept"`
	Hidden   int       `json:"hidden" minimum:"0" doc:"Locks kept that do not match the filter."`
	Rows     []LockRow `json:"rows" nullable:"false" doc:"The locks held matching the filter: those without a TTL or above the pack's maximum first, then the oldest."`
}

// LockRow is one lock held at the moment of the answer.
type LockRow struct {
	Key         Name          `json:"key"`
	Subject     []Placeholder `json:"subject" nullable:"false" doc:"The key's placeholder values: what is locked."`
	Holder      *Name         `json:"holder,omitempty" doc:"The start of the value (the holder's id, up to 64 bytes); absent when hidden (sensitive), unreadable, or an unlock time (see unlocks_at)."`
	HolderCut   bool          `json:"holder_cut" doc:"The value is longer than the part shown in holder."`
	ValueHidden bool          `json:"value_hidden" doc:"The family is sensitive: its value is never read or sent."`
	UnlocksAt   *time.Time    `json:"unlocks_at,omitempty" doc:"An epoch-ms lock's unlock time, from its value; absent otherwise."`
	TTLMs       int64         `json:"ttl_ms" doc:"Time to live left now; -1: none (a violation: the lock never expires)."`
	AgeMs       *int64        `json:"age_ms,omitempty" doc:"Since the lock was taken, counted from the pack's TTL; absent when not known (no TTL in the pack or on the key, or a longer TTL than the pack's)."`
	NoTTL       bool          `json:"no_ttl" doc:"A violation: the lock has no TTL and never expires."`
	OverMax     bool          `json:"over_max" doc:"A violation: the TTL left exceeds the pack's maximum."`
	TooLong     bool          `json:"held_too_long" doc:"Held longer than the pack's expected hold."`
	ReadAt      time.Time     `json:"read_at" doc:"When the sweep last read the key."`
	Error       string        `json:"error,omitempty" doc:"Why the value could not be read as a lock; absent when it was."`
	Actions     []KeyAction   `json:"actions" nullable:"false" doc:"The action that releases the lock (force-unlock, unlock-login), when the caller's role may run it: preview it with POST /api/v1/actions/preview {kind, conn, db: the family's, key}. Empty when none applies, the role may not, or the console does not act."`
}

// Locks maps the Locks page's data: the connection's pack choice and
// status, its sweep's snapshot, ranked at now under filter.
// Each row offers the action that releases it (action.Fix) as offer says.
func Locks(conn string, pc redisview.PackChoice, st redisview.Status, snap limits.Snapshot, filter string, now time.Time, offer Offer) LocksPage {
	p := LocksPage{Conn: conn, Redis: redisState(st), Pack: packState(pc), Filter: Name(filter), Error: snap.Err,
		Sweep: rowSweep(pc, snap, decode.ClassLock), Short: shortLocks(snap.Keyspace), Families: list[LockFamily](nil)}
	if p.Sweep.State == SweepStarting || p.Sweep.State == SweepNoFamily {
		return p
	}
	for _, f := range limits.RankLocks(snap, filter, now) {
		lf := LockFamily{FamilyRef: familyRef(f.Family, f.DB), Value: lockValue(f.Family), Kept: keptRows(f.FamilySnap, snap.Budget.Keep),
			Hidden: f.Hidden, MaxTTLMs: msPtr(f.Family.TTL.Max, f.Family.TTL.Max > 0), Rows: make([]LockRow, 0, len(f.Shown))}
		if lp, ok := f.Family.Params.(*schema.LockParams); ok && lp.Hold > 0 {
			lf.HoldMs = ptr(Millis(lp.Hold))
		}
		for _, rs := range f.Shown {
			row := lockRow(rs.Row, rs.State, now)
			row.Actions = offer.offered(action.Fix(rs.Row.Family, action.FixState{}))
			lf.Rows = append(lf.Rows, row)
		}
		p.Families.Items = append(p.Families.Items, lf)
	}
	return p
}

func shortLocks(k limits.Keyspace) ShortLocks {
	if k.On {
		return ShortLocks{Counted: true, Count: ptr(k.ShortLocks), Since: timePtr(k.Since)}
	}
	return ShortLocks{Why: k.Why}
}

func lockValue(f *schema.Family) string {
	if f.Role == schema.RoleCooldown {
		return LockValueCooldown
	}
	if lp, ok := f.Params.(*schema.LockParams); ok {
		switch lp.Value {
		case LockValueUUID, LockValueOne, LockValueEpochMs:
			return lp.Value
		}
	}
	return LockValueUnknown
}

func lockRow(r *limits.Row, st limits.State, now time.Time) LockRow {
	row := LockRow{Key: Name(r.Key), Subject: placeholders(r.Vars), TTLMs: ttlAt(r.PTTL, r.ReadAt, now), NoTTL: st.NoTTL, OverMax: st.OverMax,
		ReadAt: Time(r.ReadAt), AgeMs: msPtr(st.Age, st.Age > 0)}
	if st.NoTTL {
		row.TTLMs = -1
	}
	if lp, ok := r.Family.Params.(*schema.LockParams); ok && lp.Hold > 0 && st.Age > lp.Hold {
		row.TooLong = true
	}
	switch {
	case r.Family.Sensitive:
		row.ValueHidden = true
	case r.Err != "":
		row.Error = r.Err
	case !st.Until.IsZero():
		row.UnlocksAt = timePtr(st.Until)
	default:
		h := Name(st.Holder)
		row.Holder, row.HolderCut = &h, st.HolderCut
	}
	return row
}
