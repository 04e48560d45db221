package decode

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// Lock is a SET NX lock: its value names the holder, or for an epoch-ms
// lock the time it unlocks.
type Lock struct {
	Holder   string    // the value as written
	Kind     string    // the pack's value kind: uuid, 1 or epoch-ms
	Until    time.Time // epoch-ms: the unlock time; zero otherwise
	TTL      time.Duration
	Expected bool // the value has the shape the pack says
}

func init() {
	register(schema.RoleLock, always(ClassLock), smallReader(func(in *Input, s string, d time.Duration) (any, error) {
		p, ok := in.Match.Family.Params.(*schema.LockParams)
		if !ok {
			return nil, nil
		}
		l := Lock{Holder: s, Kind: p.Value, TTL: d}
		switch p.Value {
		case "epoch-ms":
			if ms, err := strconv.ParseInt(s, 10, 64); err == nil && ms > 0 {
				l.Until, l.Expected = time.UnixMilli(ms).UTC(), true
			}
		case "1":
			l.Expected = s == "1"
		case "uuid":
			l.Expected = isUUID(s)
		}
		return &l, nil
	}))
	registerRow(schema.RoleLock, readHeldRow, HeldRow{})
	// Only a lock holding its unlock time is a limit (see HoldsUnlockTime).
	registerReset(schema.RoleLock, Reset{Applies: HoldsUnlockTime, Names: "a lock holding an unlock time",
		// A limit lock's value is its unlock time in epoch ms.
		// (A window's companion lock of another value is only "locked".)
		Level: func(f *schema.Family, r ResetRead) (LimitLevel, Verdict) {
			l := LimitLevel{Locked: true}
			if ms, ok := r.Count(); ok && ms > 0 && HoldsUnlockTime(f) {
				l.Until = time.UnixMilli(ms).UTC()
			}
			return l, Reached
		}})
}

// HoldsUnlockTime reports a lock whose value is its unlock time (LockParams
// value "epoch-ms"), such as eIsland's login lock: a rate limiter sets it
// when a limit is exceeded, no worker holds it, so it has no holder to
// show and releasing it is resetting a limit.
func HoldsUnlockTime(f *schema.Family) bool {
	if f == nil || f.Role != schema.RoleLock {
		return false
	}
	p, ok := f.Params.(*schema.LockParams)
	return ok && p.Value == "epoch-ms"
}

// holderBytes is how much of a lock's value a row reads: a UUID, an
// epoch, a short worker name.
const holderBytes = 64

// HeldRow is a lock or a cooldown as the limits sweep read it: the start
// of its value (none for a sensitive family: its TTL alone is read).
type HeldRow struct {
	Holder    string
	HolderCut bool // the value is longer than holderBytes
}

// readHeldRow reads the first holderBytes of the value, with its length.
func readHeldRow(ctx context.Context, p redis.Pipeliner, in *Input) func() (RowState, error) {
	val := p.GetRange(ctx, in.Key, 0, holderBytes-1)
	strlen := p.StrLen(ctx, in.Key)
	return func() (RowState, error) {
		if err := firstErr(val); err != nil {
			return nil, err
		}
		return HeldRow{Holder: val.Val(), HolderCut: strlen.Val() > holderBytes}, nil
	}
}

// At is the lock s.Elapsed after its read: its TTL left, and its age from
// the pack's TTL maximum (oldest first).
func (h HeldRow) At(s Since) Moment {
	m := Moment{Gone: s.Gone(), Holder: h.Holder, HolderCut: h.HolderCut}
	m.TTL = s.Left(s.PTTL)
	m.NoTTL = s.PTTL < 0
	m.OverMax = s.Family.TTL.Max > 0 && m.TTL > s.Family.TTL.Max
	if lp, ok := s.Family.Params.(*schema.LockParams); ok && lp.Value == "epoch-ms" {
		if ms, err := strconv.ParseInt(strings.TrimSpace(h.Holder), 10, 64); err == nil && ms > 0 {
			m.Until = time.UnixMilli(ms).UTC()
		}
	}
	if mx := s.Family.TTL.Max; mx > 0 && s.PTTL >= 0 && s.PTTL <= mx {
		m.Age = mx - m.TTL
		m.Used, m.Limit = float64(m.Age), float64(mx)
	}
	m.Locked = !m.Gone
	return m
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
				return false
			}
		}
	}
	return true
}
