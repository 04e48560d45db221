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

// readSignature reads db's signature in one INFO (on a cluster, one per
// primary, summed: a write on any primary changes it); ok is false when
// the server does not report the dirty counter (the embedded demo,
// servers with INFO restricted): then no pass is ever skipped.
func readSignature(ctx context.Context, c redis.UniversalClient, db int) (signature, error) {
	txts, err := redisview.InfoEach(ctx, c, "persistence", "stats", "keyspace")
	if err != nil && !redisview.IsConnErr(err) {
		// Servers before Redis 7 take one section: the default ones.
		txts, err = redisview.InfoEach(ctx, c)
	}
	if err != nil {
		return signature{}, err
	}
	sig := signature{ok: true}
	for _, txt := range txts {
		in := ParseInfo(txt)
		dirty, ok1 := in.Int("rdb_changes_since_last_save")
		lastSave, ok2 := in.Int("rdb_last_save_time")
		expired, ok3 := in.Int("expired_keys")
		evicted, ok4 := in.Int("evicted_keys")
		sig.ok = sig.ok && ok1 && ok2 && ok3 && ok4 && in.Has("keyspace")
		sig.dirty += dirty
		sig.lastSave += lastSave
		sig.expired += expired
		sig.evicted += evicted
	}
	ks := KeyspaceOf(txts)[db]
	sig.keys, sig.expires = ks.Keys, ks.Expires
	return sig, nil
}
