package metrics

import "github.com/prometheus/client_golang/prometheus"

var (
	connL   = []string{"conn"}
	dbL     = []string{"conn", "db"}
	familyL = []string{"conn", "db", "family"}
	listL   = []string{"conn", "db", "list"}

	allDescs []*prometheus.Desc
)

func desc(name, help string, labels []string) *prometheus.Desc {
	d := prometheus.NewDesc(name, help, labels, nil)
	allDescs = append(allDescs, d)
	return d
}

// Connections and Keydeck itself.
var (
	redisUp      = desc("keydeck_redis_up", "1 when the connection's last probe reached Redis, 0 when it failed; absent before the first probe.", connL)
	ownCommands  = desc("keydeck_redis_commands_total", "Commands Keydeck itself had the connection's server run (rate() gives Keydeck's own commands/s; connections to one server share the count).", connL)
	liveViewers  = desc("keydeck_live_viewers", "Live subscriptions open now (a browser tab on a live page holds one per topic it shows).", nil)
	liveTopics   = desc("keydeck_live_topics", "Live topics polled now.", nil)
	actionsTotal = desc("keydeck_actions_total", "Admin actions this process settled, by kind and outcome (ok, failed, refused).", []string{"kind", "outcome"})
)

// The statistics sweep.
var (
	familyKeys     = desc("keydeck_family_keys", "Keys of the family in the database, as the last completed statistics sweep counted them.", familyL)
	familyMemory   = desc("keydeck_family_memory_bytes", "Memory of the family's keys (MEMORY USAGE, sampled for large values) in the last completed sweep; absent when memory could not be read.", familyL)
	violations     = desc("keydeck_violations", "Keys of the family that break their pack (type, TTL) in the last completed sweep.", familyL)
	unmatchedKeys  = desc("keydeck_unmatched_keys", "Keys no family of the pack explains, in the last completed sweep.", dbL)
	sweepPasses    = desc("keydeck_sweep_passes_total", "Statistics sweep passes completed over the database.", dbL)
	sweepAge       = desc("keydeck_sweep_last_pass_age_seconds", "Seconds since the statistics sweep shown completed.", dbL)
	sweepKeys      = desc("keydeck_sweep_last_pass_keys", "Keys the last completed statistics sweep read.", dbL)
	sweepProgress  = desc("keydeck_sweep_progress_ratio", "Keys the running sweep pass has read, over the keys of the last pass (capped at 1); absent when no sweeper runs.", dbL)
	sweepUnchanged = desc("keydeck_sweep_unchanged", "1 while no new pass runs because the database has not changed since the last pass started (its figures are current).", dbL)
)

// The limit sweep.
var (
	throttledKeys = desc("keydeck_throttled_keys", "Rate-limit keys of the family refusing their next request now (login windows locked included), among the most constrained rows the limit sweep keeps (at most its Keep per family).", familyL)
	locksHeld     = desc("keydeck_locks_held", "Locks (and cooldowns) of the family held now: the live rows the limit sweep keeps, or its last pass's count when it found more than it keeps.", familyL)
	lockOldest    = desc("keydeck_lock_oldest_age_seconds", "Age of the family's oldest held lock, from the pack's TTL maximum minus the TTL left; absent when no lock's age is known.", familyL)
	lockMaxTTL    = desc("keydeck_lock_max_ttl_seconds", "The pack's maximum TTL for the family's locks.", familyL)
	locksOverTTL  = desc("keydeck_locks_over_ttl", "Held locks of the family with no TTL or a TTL above the pack's maximum: held past the TTL they were meant to have.", familyL)
)

// The quota walk.
var (
	quotaUsed       = desc("keydeck_quota_used_ratio", "Used over limit of the family's most used subject in the current period (quotas, concurrency sets); may exceed 1.", familyL)
	orphanedRes     = desc("keydeck_orphaned_reservations", "Reservations overdue and in no concurrency set, among the rows the quota walk keeps; present once a walk pass completed.", dbL)
	orphanedMembers = desc("keydeck_orphaned_set_members", "Concurrency-set members whose reservation is gone, among the members the quota walk checked.", dbL)
	quotaPasses     = desc("keydeck_quota_walk_passes_total", "Quota walk passes completed over the connection.", connL)
)

// The bans health refresh.
var (
	banMembers = desc("keydeck_ban_set_members", "Members of the list's exact set (SCARD).", listL)
	bloomFill  = desc("keydeck_bloom_fill_ratio", "Bits set over the bloom's configured bits.", listL)
	bloomFP    = desc("keydeck_bloom_false_positive_ratio", "Chance that a name never added reads as a bloom hit now: fill^hashes.", listL)
	bloomExp   = desc("keydeck_bloom_expected_false_positive_ratio", "That chance were the bloom holding the set's members only; above it, bits of removed names remain.", listL)
	bansAge    = desc("keydeck_bans_health_age_seconds", "Seconds since the list's health was read.", listL)
)
