package handlers

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Every role the Rate limits or Locks page lists has a presenter there:
// a role of class limit or lock without one would show rows without words.
func TestEveryListedRoleHasAPresenter(t *testing.T) {
	t.Parallel()
	// A role's class may depend on its params (a counter with a limit):
	// each role is tried with no params and with each limit's.
	params := []schema.Params{nil, &schema.TokenBucketParams{Capacity: 1}, &schema.CounterWindowParams{Limit: 1},
		&schema.CounterParams{Limit: 1}, &schema.SlidingWindowParams{Limit: 1}, &schema.LockParams{}}
	for _, r := range schema.Roles() {
		for _, ps := range params {
			presented(t, &schema.Family{ID: "f", Role: r, Params: ps})
		}
	}
}

func presented(t *testing.T, f *schema.Family) {
	t.Helper()
	r := f.Role
	{
		switch decode.ClassOf(f) {
		case decode.ClassLimit:
			if p, ok := limitPresenters[r]; !ok || p.limit == nil || p.level == nil {
				t.Errorf("limit role %s has no limit presenter", r)
			}
		case decode.ClassLock:
			if p, ok := lockPresenters[r]; !ok || p.value == nil || p.holder == nil {
				t.Errorf("lock role %s has no lock presenter", r)
			}
		}
	}
}

// Each limit role's words on the Rate limits page: the pack's limit, and
// where a row stands against it.
func TestLimitPresenters(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		f            *schema.Family
		st           limits.State
		limit, level string
	}{
		{&schema.Family{Role: schema.RoleTokenBucket, Params: &schema.TokenBucketParams{Capacity: 12, RefillPerSec: 0.2, Window: time.Minute}},
			limits.State{Tokens: 3.7}, "capacity 12, refills 0.2/s (full in 1m)", "3 of 12 tokens left"},
		{&schema.Family{Role: schema.RoleCounterWindow, Params: &schema.CounterWindowParams{Limit: 10, Window: time.Hour}},
			limits.State{Count: 4}, "limit 10 per 1h (fixed window)", "4 of 10 used · 6 left"},
		{&schema.Family{Role: schema.RoleCounter, Params: &schema.CounterParams{Limit: 5, OnExceed: "lock the account"}},
			limits.State{Count: 7}, "limit 5 (a counter whose lifetime the application sets); past it: lock the account", "7 of 5 used · 0 left"},
		{&schema.Family{Role: schema.RoleSlidingWindow, Params: &schema.SlidingWindowParams{Limit: 5, Window: 15 * time.Minute, Lock: &schema.Ref{}, LockFor: 30 * time.Minute}},
			limits.State{Count: 2}, "limit 5 per 15m (sliding); exceeding it locks for 30m", "2 of 5 used in the last 15m · 3 left"},
		{&schema.Family{Role: schema.RoleBucket4j},
			limits.State{Tokens: 40, Limit: 100}, "Bucket4j buckets: each state carries its own bandwidths (the limiting one is shown)", "40 of 100 tokens left"},
		// Params not of the role's type (a pack the loader let through):
		// no words, no panic.
		{&schema.Family{Role: schema.RoleCounterWindow}, limits.State{}, "", ""},
	} {
		if got := limitText(c.f); got != c.limit {
			t.Errorf("%s: limit %q, want %q", c.f.Role, got, c.limit)
		}
		if got := limitPresenters[c.f.Role].level(c.f, c.st); got != c.level {
			t.Errorf("%s: level %q, want %q", c.f.Role, got, c.level)
		}
	}
}

// Each lock role's words on the Locks page: what the value holds, the
// holder shown, the expected hold.
func TestLockPresenters(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		f                   *schema.Family
		st                  limits.State
		value, holder, hold string
	}{
		{&schema.Family{Role: schema.RoleLock, Params: &schema.LockParams{Value: "uuid", Hold: 5 * time.Second}},
			limits.State{Holder: "5d0c8f5e", HolderCut: true}, "lock; the value is the holder's id (UUID)", "5d0c8f5e…", "; expected hold ≤ 5s"},
		{&schema.Family{Role: schema.RoleLock, Params: &schema.LockParams{Value: "epoch-ms"}},
			limits.State{Holder: "1"}, "lock; the value is the unlock time (epoch ms)", "1", "; the pack gives no expected hold time"},
		{&schema.Family{Role: schema.RoleLock, Params: &schema.LockParams{Value: "1"}},
			limits.State{Holder: "1"}, "lock; the value (\"1\") does not name its holder", "1", "; the pack gives no expected hold time"},
		{&schema.Family{Role: schema.RoleCooldown},
			limits.State{Holder: "x", HolderCut: true}, "cooldown: blocks the action while it exists", "x", "; the pack gives no expected hold time"},
	} {
		if got := lockValueText(c.f); got != c.value {
			t.Errorf("%s: value %q, want %q", c.f.Role, got, c.value)
		}
		if got := lockHolder(c.f, c.st); got != c.holder {
			t.Errorf("%s: holder %q, want %q", c.f.Role, got, c.holder)
		}
		if got := holdText(c.f); got != "the pack gives no TTL, so the age is not known"+c.hold {
			t.Errorf("%s: hold %q", c.f.Role, got)
		}
	}
	if got := roleList(lockPresenters); got != "lock or cooldown" {
		t.Errorf("lock roles %q", got)
	}
}
