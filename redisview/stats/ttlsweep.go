package stats

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// ttlSweep estimates keys-with-expiry and average TTL per database on
// servers whose INFO has no keyspace section. Each database has its own SCAN
// cursor; a tick advances several databases round-robin within a key budget.
// The keys one tick's SCAN returns are PTTL'd in the next tick's pipeline,
// so a tick stays one round trip.
type ttlSweep struct {
	dbs  map[int]*dbSweep
	next int // round-robin start for the next tick
}

type dbSweep struct {
	cursor   uint64
	scanDone bool     // SCAN returned cursor 0: the pass ends once pending is read
	pending  []string // keys whose PTTL goes out with the next tick
	cur      sweepResult
	last     *sweepResult // the latest completed pass
}

type sweepResult struct {
	seen, withTTL int64
	ttlSum        time.Duration
}

type sweepStep struct {
	db        int
	selectCmd *redis.StatusCmd
	pttls     []*redis.DurationCmd
	scan      *redis.ScanCmd
}

const (
	sweepDBsPerTick = 5 // at most sweepDBsPerTick × sweepCount keys per tick
)

// queue adds this tick's sweep commands to p for databases that hold keys
// (sizes are the previous tick's DBSIZE answers).
func (s *ttlSweep) queue(ctx context.Context, p redis.Pipeliner, sizes map[int]int64, databases int) []sweepStep {
	if s.dbs == nil {
		s.dbs = map[int]*dbSweep{}
	}
	var steps []sweepStep
	start := s.next
	for i := 0; i < databases && len(steps) < sweepDBsPerTick; i++ {
		db := (start + i) % databases
		if sizes != nil && sizes[db] == 0 {
			delete(s.dbs, db)
			continue
		}
		d := s.dbs[db]
		if d == nil {
			d = &dbSweep{}
			s.dbs[db] = d
		}
		st := sweepStep{db: db}
		st.selectCmd = p.Select(ctx, db)
		for _, k := range d.pending {
			st.pttls = append(st.pttls, p.PTTL(ctx, k))
		}
		if !d.scanDone {
			st.scan = p.Scan(ctx, d.cursor, "", sweepCount)
		}
		steps = append(steps, st)
		s.next = (db + 1) % databases
	}
	return steps
}

// abort forgets steps whose round trip failed; their keys are read next pass.
func (s *ttlSweep) abort(steps []sweepStep) {
	for _, st := range steps {
		if d := s.dbs[st.db]; d != nil {
			d.pending = nil
		}
	}
}

// absorb takes the steps' replies and moves each database's pass on.
func (s *ttlSweep) absorb(steps []sweepStep) {
	for _, st := range steps {
		d := s.dbs[st.db]
		if d == nil {
			continue
		}
		if st.selectCmd.Err() != nil { // the commands ran on another database
			*d = dbSweep{last: d.last}
			continue
		}
		for _, cmd := range st.pttls {
			ttl, err := cmd.Result()
			if err != nil || ttl == -2 { // gone since the SCAN
				continue
			}
			d.cur.seen++
			if ttl >= 0 {
				d.cur.withTTL++
				d.cur.ttlSum += ttl
			}
		}
		d.pending = nil
		if st.scan != nil {
			keys, cursor, err := st.scan.Result()
			if err != nil {
				*d = dbSweep{last: d.last}
				continue
			}
			d.pending, d.cursor = keys, cursor
			d.scanDone = cursor == 0
		}
		if d.scanDone && len(d.pending) == 0 {
			done := d.cur
			*d = dbSweep{last: &done}
		}
	}
}

// stats combines DBSIZE with the sweep: the latest completed pass, or the
// running pass while none has completed.
func (s *ttlSweep) stats(sizes map[int]int64, databases int) []DBStats {
	var out []DBStats
	for db := 0; db < databases; db++ {
		keys := sizes[db]
		if keys == 0 {
			continue
		}
		st := DBStats{Index: db, Keys: keys}
		var res sweepResult
		partial := false
		if d := s.dbs[db]; d != nil {
			if d.last != nil {
				res = *d.last
			} else {
				res, partial = d.cur, true
			}
		}
		if res.seen == 0 {
			st.Expires = redisview.Pending[int64]("sweeping…")
			st.AvgTTL = redisview.Pending[time.Duration]("sweeping…")
			out = append(out, st)
			continue
		}
		// A completed pass covers every key (SCAN may return one twice, or
		// keys change meanwhile, so seen need not equal DBSIZE); a running
		// pass is an estimate from the share read so far.
		st.Coverage = 1
		if partial {
			st.Coverage = min(1, float64(res.seen)/float64(keys))
		}
		st.Estimated = partial
		expires := res.withTTL
		if res.seen != keys {
			expires = int64(float64(res.withTTL)/float64(res.seen)*float64(keys) + 0.5)
		}
		st.Expires = redisview.Some(expires)
		if res.withTTL > 0 {
			st.AvgTTL = redisview.Some(res.ttlSum / time.Duration(res.withTTL))
		} else {
			st.AvgTTL = redisview.None[time.Duration]("no keys with expiry")
		}
		out = append(out, st)
	}
	return out
}
