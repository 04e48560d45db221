package action

import (
	"context"
	"time"
)

// Append writes r to the stream as it is, for work recorded outside the
// Runner that keeps the stream's format: a bulk job's intent and
// outcomes (redisview/bulk), which act on many keys in batches and keep
// their priors beside the stream. Returns the record's id.
func (a *Audit) Append(ctx context.Context, r Record) (string, error) {
	id, err := a.xadd(ctx, a.client, r).Result()
	if err != nil {
		return "", auditErr(err)
	}
	return id, nil
}

// ParseTTL reads a TTL as set-ttl does ("90s", "10m", "7d", or
// "persist"), for a bulk job's form.
func ParseTTL(s string) (d time.Duration, persist bool, err error) { return parseTTL(s) }
