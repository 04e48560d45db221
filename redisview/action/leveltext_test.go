package action

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

// The reset preview's level: each limit role's descriptor returns numbers
// and durations (decode.Reset.Level), and one writer turns them into the
// preview's words. No Redis: what the preview read is given.
func TestResetLevelText(t *testing.T) {
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	tb := &schema.TokenBucketParams{Capacity: 12, Requested: 1, Window: time.Minute}
	for _, c := range []struct {
		name string
		f    *schema.Family
		r    decode.ResetRead
		want string
		v    verdict
	}{
		{"window reached", &schema.Family{Role: schema.RoleCounterWindow, Params: &schema.CounterWindowParams{Limit: 5, Window: 10 * time.Minute}},
			decode.ResetRead{Value: "5", Size: -1}, "count 5, limit 5 per 10m (reached)", reached},
		{"window by calendar, cut value", &schema.Family{Role: schema.RoleCounterWindow, Params: &schema.CounterWindowParams{Limit: 30, Calendar: "day"}},
			decode.ResetRead{Value: "1", Cut: true, Size: -1}, "limit 30 per day (UTC)", unknown},
		{"counter below", &schema.Family{Role: schema.RoleCounter, Params: &schema.CounterParams{Limit: 5}},
			decode.ResetRead{Value: "2", Size: -1}, "count 2, limit 5", notReached},
		{"counter without limit", &schema.Family{Role: schema.RoleCounter, Params: &schema.CounterParams{}},
			decode.ResetRead{Value: "2", Size: -1}, "count 2", unknown},
		{"sliding", &schema.Family{Role: schema.RoleSlidingWindow, Params: &schema.SlidingWindowParams{Limit: 5, Window: 5 * time.Minute}},
			decode.ResetRead{Size: 5}, "5 recorded, limit 5 per 5m (reached)", reached},
		{"bucket unread", &schema.Family{Role: schema.RoleTokenBucket, Params: tb},
			decode.ResetRead{Size: 2}, "capacity 12, refilled in 1m", unknown},
		{"bucket empty", &schema.Family{Role: schema.RoleTokenBucket, Params: tb},
			decode.ResetRead{Size: 2, Extra: &decode.TokenBucket{Tokens: 0.4, Requested: 1, Refused: true}},
			"0 of 12 tokens left (a request takes 1: refused), capacity 12, refilled in 1m", reached},
		{"lock", &schema.Family{Role: schema.RoleLock, Params: &schema.LockParams{Value: "epoch-ms"}},
			decode.ResetRead{Value: "1767262140000", Size: -1}, "locked until 2026-01-01 10:09:00 UTC, in 9m", reached},
		{"lock unreadable", &schema.Family{Role: schema.RoleLock, Params: &schema.LockParams{Value: "epoch-ms"}},
			decode.ResetRead{Value: "x", Size: -1}, "locked", reached},
		// A sliding window's companion lock whose value is not an unlock
		// time (a custom pack's "1") is no limit of its own, but it locks
		// the user out while it exists (it read "" and unknown once).
		{"window's lock, value not a time", &schema.Family{Role: schema.RoleLock, Params: &schema.LockParams{Value: "1"}},
			decode.ResetRead{Value: "1", Size: -1}, "locked", reached},
		{"cooldown", &schema.Family{Role: schema.RoleCooldown}, decode.ResetRead{Value: "1", Size: -1}, "blocks the action while it exists", reached},
	} {
		p := &limitPlan{now: now}
		got, v := p.detail(limitKey{fam: c.f, extra: c.r.Extra}, State{Excerpt: c.r.Value, Truncated: c.r.Cut, Size: c.r.Size})
		if got != c.want || v != c.v {
			t.Errorf("%s: %q %v, want %q %v", c.name, got, v, c.want, c.v)
		}
	}
}
