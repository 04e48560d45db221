package redisview

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// ttlSweep estimates keys-with-expiry and average TTL per database on
// servers whose INFO has no keyspace section. It walks one database at a
// time with SCAN, a bounded COUNT per tick; the keys one tick's SCAN returns
// are PTTL'd in the next tick's pipeline, so a tick stays one round trip.
type ttlSweep struct {
	db       int
	cursor   uint64
	scanDone bool     // SCAN of db returned cursor 0
	pending  []string // keys whose PTTL goes out with the next tick
	seen     int64    // keys with a PTTL answer in this pass
	withTTL  int64
	ttlSum   time.Duration

	results map[int]sweepResult
}

type sweepResult struct {
	seen, withTTL int64
	ttlSum        time.Duration
	partial       bool // the pass is still running; numbers so far
}

type sweepStep struct {
	db    int
	pttls []*redis.DurationCmd
	scan  *redis.ScanCmd
}

// queue adds this tick's sweep commands to p.
func (s *ttlSweep) queue(ctx context.Context, p redis.Pipeliner) sweepStep {
	st := sweepStep{db: s.db}
	p.Select(ctx, s.db)
	for _, k := range s.pending {
		st.pttls = append(st.pttls, p.PTTL(ctx, k))
	}
	if !s.scanDone {
		st.scan = p.Scan(ctx, s.cursor, "", sweepCount)
	}
	return st
}

// abort forgets a step whose round trip failed; the keys are re-read next pass.
func (s *ttlSweep) abort() { s.pending = nil }

// absorb takes the step's replies and moves the sweep on. sizes are this
// tick's DBSIZE answers, used to pick the next database with keys.
func (s *ttlSweep) absorb(st sweepStep, sizes map[int]int64) {
	if s.results == nil {
		s.results = map[int]sweepResult{}
	}
	for _, cmd := range st.pttls {
		d, err := cmd.Result()
		if err != nil || d == -2 { // gone since the SCAN
			continue
		}
		s.seen++
		if d >= 0 {
			s.withTTL++
			s.ttlSum += d
		}
	}
	s.pending = nil
	if st.scan != nil {
		keys, cursor, err := st.scan.Result()
		if err != nil {
			s.restart(s.db)
			return
		}
		s.pending, s.cursor = keys, cursor
		s.scanDone = cursor == 0
	}
	if s.scanDone && len(s.pending) == 0 {
		s.results[s.db] = sweepResult{seen: s.seen, withTTL: s.withTTL, ttlSum: s.ttlSum}
		s.restart(s.nextDB(sizes))
		return
	}
	if prev, ok := s.results[s.db]; !ok || prev.partial {
		s.results[s.db] = sweepResult{seen: s.seen, withTTL: s.withTTL, ttlSum: s.ttlSum, partial: true}
	}
}

func (s *ttlSweep) restart(db int) {
	*s = ttlSweep{db: db, results: s.results}
}

// nextDB is the next database after the current one that holds keys.
func (s *ttlSweep) nextDB(sizes map[int]int64) int {
	n := len(sizes)
	if n == 0 {
		return 0
	}
	for i := 1; i <= n; i++ {
		db := (s.db + i) % n
		if sizes[db] > 0 {
			return db
		}
	}
	return s.db
}

// stats combines DBSIZE with the sweep's latest result per database.
func (s *ttlSweep) stats(sizes map[int]int64) []DBStats {
	var out []DBStats
	for db := 0; db < len(sizes); db++ {
		keys := sizes[db]
		if keys == 0 {
			continue
		}
		st := DBStats{Index: db, Keys: keys}
		res, ok := s.results[db]
		if !ok || res.seen == 0 {
			st.Expires = Pending[int64]("sweep pending")
			st.AvgTTL = Pending[time.Duration]("sweep pending")
			out = append(out, st)
			continue
		}
		cov := float64(res.seen) / float64(keys)
		if cov > 1 {
			cov = 1
		}
		st.Coverage = cov
		st.Estimated = res.partial || res.seen != keys
		expires := res.withTTL
		if st.Estimated {
			expires = int64(float64(res.withTTL)/float64(res.seen)*float64(keys) + 0.5)
		}
		st.Expires = Some(expires)
		if res.withTTL > 0 {
			st.AvgTTL = Some(res.ttlSum / time.Duration(res.withTTL))
		} else {
			st.AvgTTL = None[time.Duration]("no keys with expiry")
		}
		out = append(out, st)
	}
	return out
}
