package stats

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// freshFor is how long a completed pass of a database that has not changed
// since stays current: no new pass runs meanwhile. After it, a pass runs
// anyway (time to live moves keys between TTL buckets without any write).
const freshFor = 15 * time.Minute

// signature is what INFO says of a database's changes: the server's dirty
// counter (rdb_changes_since_last_save, with rdb_last_save_time so a save
// that resets it is a change), the keys expired and evicted, and the
// database's own keys and keys with expiry. Two equal signatures mean no
// write reached the server in between, so a pass would read what the last
// one read (but for time to live, which freshFor bounds).
type signature struct {
	ok               bool // the server reports a dirty counter
	dirty, lastSave  int64
	expired, evicted int64
	keys, expires    int64
}

// readSignature reads db's signature in one INFO; ok is false when the
// server does not report the dirty counter (the embedded demo, servers
// with INFO restricted): then no pass is ever skipped.
func readSignature(ctx context.Context, c redis.UniversalClient, db int) (signature, error) {
	txt, err := c.Info(ctx, "persistence", "stats", "keyspace").Result()
	if err != nil && !redisview.IsConnErr(err) {
		// Servers before Redis 7 take one section: the default ones.
		txt, err = c.Info(ctx).Result()
	}
	if err != nil {
		return signature{}, err
	}
	in := ParseInfo(txt)
	var sig signature
	var ok1, ok2, ok3, ok4 bool
	sig.dirty, ok1 = in.Int("rdb_changes_since_last_save")
	sig.lastSave, ok2 = in.Int("rdb_last_save_time")
	sig.expired, ok3 = in.Int("expired_keys")
	sig.evicted, ok4 = in.Int("evicted_keys")
	sig.ok = ok1 && ok2 && ok3 && ok4 && in.Has("keyspace")
	ks := in.Keyspace()[db]
	sig.keys, sig.expires = ks.Keys, ks.Expires
	return sig, nil
}
