package stats

import (
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// NeedsNoEviction reports a pack whose keys must never be evicted: one
// with Bucket4j buckets (vertique's seed asks for a non-evicting Redis;
// an evicted bucket comes back full, which lifts its limit).
func NeedsNoEviction(pc redisview.PackChoice) bool {
	if pc.Pack == nil {
		return false
	}
	for _, f := range pc.Pack.Families {
		if f.Role == schema.RoleBucket4j {
			return true
		}
	}
	return false
}

// Evicting reports a policy that is known and may evict keys: flagged on
// a connection whose pack NeedsNoEviction. An unreadable policy is not.
func (h Headroom) Evicting() bool { return h.Policy.OK && h.Policy.V != "noeviction" }
