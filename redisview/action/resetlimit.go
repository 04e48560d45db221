package action

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views/format"
)

// ResetLimit deletes a rate-limit key so the user it limits may try again
// at once: a key of role counter-window, token-bucket, sliding-window,
// counter, cooldown or bucket4j (Bucket4j starts a new bucket, with its
// bandwidths' initial tokens, when the key is missing), or a lock whose
// value is its unlock time (the login lock, see isLimitLock). Any other key
// is refused.
//
// A limit may span two keys: a sliding window that locks when exceeded
// (SlidingWindowParams.Lock) and that lock. Resetting either resets both,
// in one transaction, so "try again" is true: deleting the failures alone
// would leave the user locked out, and deleting the lock alone would let
// the very next failure lock again. The other key is watched and recorded
// even when it is absent (a lock set between preview and confirm refuses
// the action), and undo restores both.
//
// The preview names the family and role, what is cheaply known of the
// limit (a counter's count, a window's entries, a bucket's tokens, a
// lock's unlock time, against the pack's limit) and the TTL. Like
// delete-key it records the prior value, so admin can undo it (not a
// sensitive key's).
type ResetLimit struct{}

func init() {
	Register(ResetLimit{})
}

func (ResetLimit) Name() string    { return KindResetLimit }
func (ResetLimit) Title() string   { return "Reset limit" }
func (ResetLimit) Requires() Level { return Support }
func (ResetLimit) Args() []Arg     { return nil }

// AppliesTo is true for the families whose role registered a reset (in
// redisview/decode, next to its reader): the rate-limit roles and a lock
// holding an unlock time.
func (ResetLimit) AppliesTo(f *schema.Family) bool {
	_, ok := decode.ResetOf(f)
	return ok
}

func (k ResetLimit) Plan(ctx context.Context, env Env, req Request) (Plan, error) {
	if err := checkArgs(req); err != nil {
		return nil, err
	}
	m, cls, err := classify(env, k, req, decode.ResettableKeys())
	if err != nil {
		return nil, err
	}
	if !k.AppliesTo(m.Family) {
		return nil, notApplicable(k, decode.ResettableKeys(), req.Key, m.Family)
	}
	p := &limitPlan{now: env.Now, keys: []limitKey{{key: req.Key, fam: m.Family}}}
	p.keys = append(p.keys, limitCompanions(cls, req.DB, m, req.Key)...)
	if d, _ := decode.ResetOf(m.Family); d.Read != nil {
		p.keys[0].extra = d.Read(ctx, env.Conn.DB(req.DB), req.Key, m.Family, env.Now)
	}
	return p, nil
}

type limitKey struct {
	key    string
	fam    *schema.Family
	lock   bool // the lock of the first key's window
	window bool // a window that sets the first key, a lock
	extra  any  // what the role's own Read found (decode.Reset.Read)
}

type limitPlan struct {
	now  time.Time
	keys []limitKey
}

func (p *limitPlan) Keys() []string {
	out := make([]string, len(p.keys))
	for i, k := range p.keys {
		out[i] = k.key
	}
	return out
}

func (p *limitPlan) Describe(states []State) ([]Change, error) {
	out := make([]Change, len(states))
	details := make([]string, len(states))
	present, all := false, notReached
	for i, s := range states {
		lk := p.keys[i]
		if !s.Exists() {
			continue
		}
		if lk.fam.TypeViolation(s.Type) != "" {
			return nil, typeMismatch(ResetLimit{}, s, lk.fam)
		}
		present = true
		d, v := p.detail(lk, s)
		details[i] = d
		all = max(all, v) // reached beats unknown beats not reached
	}
	if !present {
		return nil, fmt.Errorf("%w: %s is not set (it expired or was reset): the user can already try again", ErrNotFound, quoteKey(states[0].Key))
	}
	for i, s := range states {
		lk := p.keys[i]
		var what string
		switch {
		case i == 0 && all == reached:
			what = "RESET LIMIT so the user can try again immediately"
		case i == 0 && all == notReached:
			what = "RESET LIMIT, which is not reached now (the user is not being refused): this only starts the count again"
		case i == 0:
			what = "RESET LIMIT"
		case lk.lock:
			what = "and its lock"
		case lk.window:
			what = "and the window that sets this lock"
		}
		if !s.Exists() {
			out[i] = Change{Key: s.Key, Op: "none", After: "absent", Before: s,
				Text: fmt.Sprintf("%s: %s (family %s, %s) is not set", what, quoteKey(s.Key), lk.fam.ID, lk.fam.Role)}
			continue
		}
		detail := details[i]
		if detail != "" {
			detail = ": " + detail
		}
		out[i] = Change{Key: s.Key, Op: "delete", After: "absent", Before: s,
			Text: fmt.Sprintf("%s: DELETE %s (family %s, %s%s; %s)", what, quoteKey(s.Key), lk.fam.ID, lk.fam.Role, detail, s.Shape())}
	}
	return out, nil
}

// verdict is whether a limit refuses the user now, as far as Keydeck can
// tell from what it read; ordered so that max combines keys.
type verdict = decode.Verdict

const (
	notReached = decode.NotReached
	unknown    = decode.Unknown
	reached    = decode.Reached
)

// detail says what the limit stands at: the role's reset descriptor
// reads it from State (a string's excerpt, a collection's size) and the
// pack's params, as numbers; views/format writes them (LimitLevel).
func (p *limitPlan) detail(lk limitKey, s State) (string, verdict) {
	d, ok := decode.LevelOf(lk.fam)
	switch {
	case !ok:
		return "", unknown
	case d.Level == nil:
		// A role whose key the preview does not read says what its key means.
		return d.Present, d.Refuses
	}
	l, v := d.Level(lk.fam, decode.ResetRead{Value: s.Excerpt, Cut: s.Truncated, Size: s.Size, Extra: lk.extra, Now: p.now})
	return format.LimitLevel(l, p.now), v
}

// limitCompanions are the other keys of the limit key m belongs to: the
// lock a sliding window sets, or the windows that set a lock. A companion
// whose key cannot be built, or does not classify back, is left out.
func limitCompanions(cls *schema.Classifier, db int, m schema.Match, key string) []limitKey {
	if cls == nil {
		return nil
	}
	var out []limitKey
	add := func(k string, fam *schema.Family, lk limitKey) {
		if k == key || slices.ContainsFunc(out, func(c limitKey) bool { return c.key == k }) {
			return
		}
		if got, ok := cls.Classify(db, k); !ok || got != fam {
			return
		}
		lk.key, lk.fam = k, fam
		out = append(out, lk)
	}
	if sw, ok := m.Family.Params.(*schema.SlidingWindowParams); ok && sw.Lock != nil && sw.Lock.Family != nil && sw.Lock.Family.InDB(db) {
		if k, err := sw.Lock.Key(m.Map()); err == nil {
			add(k, sw.Lock.Family, limitKey{lock: true})
		}
	}
	if !isLimitLock(m.Family) || cls.Pack() == nil {
		return out
	}
	for _, g := range cls.Pack().Families {
		sw, ok := g.Params.(*schema.SlidingWindowParams)
		if !ok || sw.Lock == nil || sw.Lock.Family != m.Family || !g.InDB(db) {
			continue
		}
		// The reference has the lock's shape, with placeholders named by
		// the window: map the lock's values to those names by position.
		phs := sw.Lock.Pattern.Placeholders()
		if len(phs) != len(m.Vars) {
			continue
		}
		vars := map[string]string{}
		for i, ph := range phs {
			vars[ph.Name] = m.Vars[i].Value
		}
		wk, err := g.Key(vars)
		if err != nil {
			continue
		}
		// Only if the window names this very lock back.
		if wm, ok := cls.Match(db, wk); !ok || wm.Family != g {
			continue
		} else if back, err := sw.Lock.Key(wm.Map()); err != nil || back != key {
			continue
		}
		add(wk, g, limitKey{window: true})
	}
	return out
}

func (p *limitPlan) Apply(ctx context.Context, tx redis.Pipeliner, _ []State) {
	tx.Del(ctx, p.Keys()...)
}
