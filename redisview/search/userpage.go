package search

import (
	"context"
	"strconv"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

// UserPage is one read of a user page: what RunUser found, and each key
// found read by its family's role.
type UserPage struct {
	UserResult
	// Keys, by index of Hits: how each hit was read by its role.
	Keys []HitRead
}

// HitRead is one hit as its family's role reads it.
type HitRead struct {
	// Match is the pack's reading of the key; Matched when it is the
	// hit's family (a key the pack reads as another family is not
	// decoded).
	Match   schema.Match
	Matched bool
	// Read: a decoder read it (Decodes); Result and Err are what it got.
	Read   bool
	Result decode.Result
	Err    error
	// Locked: the key is a window that locks, and its lock is among the
	// keys found.
	Locked bool
}

// Decodes reports whether a key of m's family, of type typ, is read by
// its role: a family with a decoder, not sensitive, of the type its role
// expects.
func Decodes(m schema.Match, typ string) bool {
	f := m.Family
	return f != nil && !f.Sensitive && decode.Supported(f.Role) && f.TypeViolation(typ) == ""
}

// ReadUserPage reads the user page once (RunUser), then every key found
// by its role, all keys' role reads batched into the round trips of the
// deepest one.
func ReadUserPage(ctx context.Context, conn *redisview.Conn, q UserQuery, lim UserLimits, now time.Time) (UserPage, error) {
	res, err := RunUser(ctx, conn, q, lim)
	if err != nil {
		return UserPage{}, err
	}
	p := UserPage{UserResult: res, Keys: make([]HitRead, len(res.Hits))}
	pack := conn.Pack()
	if pack == nil {
		return p, nil
	}
	present := map[string]bool{}
	for _, h := range res.Hits {
		present[strconv.Itoa(h.DB)+"\x00"+h.Key] = true
	}
	cls := pack.Classifier()
	var reqs []decodeReq
	var at []int
	for i, h := range res.Hits {
		if h.Family == nil {
			continue
		}
		m, ok := cls.Match(h.DB, h.Key)
		if !ok || m.Family != h.Family {
			continue
		}
		k := &p.Keys[i]
		k.Match, k.Matched, k.Locked = m, true, lockedBy(m, h.DB, present)
		if Decodes(m, h.Type) {
			k.Read = true
			reqs = append(reqs, decodeReq{DB: h.DB, Key: h.Key, M: m})
			at = append(at, i)
		}
	}
	out := decodeMany(ctx, conn, reqs, now)
	for j, i := range at {
		p.Keys[i].Result, p.Keys[i].Err = out[j].Result, out[j].Err
	}
	return p, nil
}

// lockedBy reports a key of a window that locks (m) whose lock is among
// the keys found (present, by "db\x00key").
func lockedBy(m schema.Match, db int, present map[string]bool) bool {
	sw, ok := m.Family.Params.(*schema.SlidingWindowParams)
	if !ok || sw.Lock == nil || sw.Lock.Family == nil {
		return false
	}
	k, err := sw.Lock.Key(m.Map())
	return err == nil && present[strconv.Itoa(db)+"\x00"+k]
}
