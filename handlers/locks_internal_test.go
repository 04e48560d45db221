package handlers

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
)

// A lock older than the pack's expected hold is held too long; one without
// a TTL is a violation; a family without a hold says so.
func TestLockRowHeldTooLong(t *testing.T) {
	fam := &schema.Family{ID: "job-lock", Role: schema.RoleLock, Type: "string",
		TTL: schema.TTLPolicy{Kind: schema.TTLRequired, Max: 30 * time.Second}, Params: &schema.LockParams{Value: "uuid", Hold: 5 * time.Second}}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name           string
		pttl           time.Duration
		tooLong, noTTL bool
		age            string
	}{
		{"fresh", 28 * time.Second, false, false, "2s"},
		{"held too long", 20 * time.Second, true, false, "10s"},
		{"no TTL", -1, false, true, "unknown (no TTL)"},
	} {
		r := limits.Row{Key: "job:lock:1", Family: fam, ReadAt: t0, PTTL: c.pttl, Holder: "5d0c8f5e-8a6b-4f43-9d3c-2f1f3c9b7e21"}
		row := lockRow("main", &r, r.At(t0), false)
		if row.TooLong != c.tooLong || row.NoTTL != c.noTTL || row.Age != c.age || row.Holder != r.Holder {
			t.Errorf("%s: %+v", c.name, row)
		}
	}
	if got := holdText(fam); got != "taken with a TTL of up to 30s (age is counted from it); expected hold ≤ 5s" {
		t.Errorf("hold text %q", got)
	}
	fam.Params = &schema.LockParams{Value: "1"}
	if got := holdText(fam); got != "taken with a TTL of up to 30s (age is counted from it); the pack gives no expected hold time" {
		t.Errorf("hold text %q", got)
	}
}
