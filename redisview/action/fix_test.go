package action

import (
	"testing"

	"github.com/keydeck/keydeck/redisview/schema"
)

// Fix is the choice the Rate limits, Locks and user pages share: every
// eIsland family with a fixing action, in the states that change it.
func TestFixChoice(t *testing.T) {
	cls := schema.BuiltinPack("eisland").Classifier()
	fam := func(db int, key string) *schema.Family {
		t.Helper()
		m, ok := cls.Match(db, key)
		if !ok {
			t.Fatalf("%q does not classify in db %d", key, db)
		}
		return m.Family
	}
	window := fam(6, "auth:limit:login:failures:ada")
	lock := fam(6, "auth:limit:login:lock:ada")
	for _, c := range []struct {
		name string
		f    *schema.Family
		st   FixState
		want string
	}{
		{"login window, its lock set", window, FixState{Locked: true}, KindUnlockLogin},
		{"login window, no lock", window, FixState{}, KindResetLimit},
		{"login window, no lock, idle", window, FixState{Idle: true}, ""},
		{"login lock", lock, FixState{}, KindUnlockLogin},
		{"login lock, idle", lock, FixState{Idle: true}, KindUnlockLogin},
		{"a cache", &schema.Family{Role: schema.RoleCache}, FixState{}, ""},
		{"a holder's lock", &schema.Family{Role: schema.RoleLock, Params: &schema.LockParams{Value: "uuid"}}, FixState{}, KindForceUnlock},
		{"a failure counter", &schema.Family{Role: schema.RoleCounter, Params: &schema.CounterParams{Limit: 5, Counts: "failures"}}, FixState{Idle: true}, KindClearFailures},
		{"a token bucket", &schema.Family{Role: schema.RoleTokenBucket, Params: &schema.TokenBucketParams{}}, FixState{}, KindResetLimit},
		{"a cooldown", &schema.Family{Role: schema.RoleCooldown}, FixState{}, KindResetLimit},
	} {
		if got := Fix(c.f, c.st); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
