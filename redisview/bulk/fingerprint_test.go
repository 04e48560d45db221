package bulk_test

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/bulk"
)

// The fingerprints' key is made once in the audit Redis, never expires,
// and is shared by every engine (a replica, a restart with another
// session secret): a job counted by one runs on another without a key
// "changed".
func TestFingerprintKeySharedThroughTheAuditRedis(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.fill("tmp:", 50, time.Time{})
	e1 := f.engine(bulk.Options{})
	j := f.counted(e1, family("tmp"))
	key := f.audit.Get(f.ctx, "keydeck:bulk:fingerprint-key").Val()
	if len(key) != 64 || f.audit.TTL(f.ctx, "keydeck:bulk:fingerprint-key").Val() != -1 {
		t.Fatalf("fingerprint key %q, TTL %v", key, f.audit.TTL(f.ctx, "keydeck:bulk:fingerprint-key").Val())
	}
	e1.Close()
	e2 := f.engine(bulk.Options{})
	if _, err := e2.Start(f.ctx, admin, j.ID, 0); err != nil {
		t.Fatal(err)
	}
	if j = f.finished(e2, j.ID); j.Acted != 50 || j.Skipped() != 0 {
		t.Fatalf("run by another engine: %+v", j)
	}
	if f.audit.Get(f.ctx, "keydeck:bulk:fingerprint-key").Val() != key {
		t.Fatal("the fingerprint key was made again")
	}
}
