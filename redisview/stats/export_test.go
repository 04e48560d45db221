package stats

import (
	"context"
	"time"

	"github.com/keydeck/keydeck/redisview"
)

// SweepPass runs one full pass over db as a sweeper does, reading whole
// the first DefaultSampleSize keys of each family, and returns its detail.
func SweepPass(ctx context.Context, c *redisview.Conn, db int) (DBDetail, error) {
	return SweepPassSample(ctx, c, db, DefaultSampleSize)
}

// SweepPassSample is SweepPass reading sample keys of each family whole.
func SweepPassSample(ctx context.Context, c *redisview.Conn, db, sample int) (DBDetail, error) {
	ks := newKeySweep(c, c.DB(db), 500)
	acc := newAccumulator(time.Now(), sample)
	for {
		cls := c.Classifier()
		batch, done, err := ks.step(ctx, func(keys []string) []readLevel { return acc.plan(db, keys, cls) })
		if err != nil {
			return DBDetail{}, err
		}
		for _, k := range batch {
			acc.add(db, k, cls)
		}
		if done {
			break
		}
	}
	d := DBDetail{Conn: c.Name, DB: db, Pass: 1}
	acc.detail(&d, acc.seen, false)
	d.MemoryWhy = ks.mem.Why
	d.ReadPath = "pipelines"
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
