package stats

import (
	"context"
	"time"

	"github.com/keydeck/keydeck/redisview"
)

// SweepPass runs one full pass over db, with the sweep script where the
// server runs it (script) or with pipelines only, and returns its detail.
func SweepPass(ctx context.Context, c *redisview.Conn, db int, script bool) (DBDetail, error) {
	ks := newKeySweep(c, c.DB(db), 500)
	ks.noScript = !script
	acc := newAccumulator(time.Now())
	for {
		batch, done, err := ks.step(ctx)
		if err != nil {
			return DBDetail{}, err
		}
		for _, k := range batch {
			acc.add(db, k, c.Classifier())
		}
		if done {
			break
		}
	}
	d := DBDetail{Conn: c.Name, DB: db, Pass: 1}
	acc.detail(&d, acc.seen, false)
	d.MemoryWhy = ks.mem.Why
	d.ReadPath = ks.path()
	return d, nil
}

// ReadSignature is readSignature: what INFO says of db's changes.
var ReadSignature = readSignature

// WithoutRelease leaves a sweeper's lease to expire when it stops, as a
// replica that died would.
func WithoutRelease() Option { return func(p *Sweepers) { p.noRelease = true } }

// ShareKey is the key of s's shared state what ("lease", "pass", "status")
// in the audit Redis.
func ShareKey(s *Sweeper, what string) string { return s.shareKey(what) }

// LeaseToken is the value s's lease holds while s holds it ("" before s
// made it).
func LeaseToken(s *Sweeper) string {
	if l := s.leased.Load(); l != nil {
		return l.Token()
	}
	return ""
}
