package stats

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/lease"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Replicas of Keydeck that share an audit Redis (WithShare) sweep each
// database once: the replica holding the database's lease sweeps it and
// publishes what a page shows — the latest completed pass (the keptPass:
// derived statistics, and the key names the database page lists, never a
// value) and the running pass's status — beside the lease; the others read
// that, and send the database nothing. A replica that joins shows the
// published pass at once; when the holder dies (its lease unrenewed for
// lease.TTL) a replica with a viewer takes the lease and sweeps on from
// the published pass (its signature too: an unchanged database is not
// swept again).

// WithShare makes the pool share its sweeps with the replicas that share
// sh's audit Redis (nil: the pool sweeps on its own, as without it).
func WithShare(sh *lease.Shared) Option { return func(p *Sweepers) { p.share = sh } }

// publishEvery is how often a holder writes the running pass's status
// (progress, an error, nothing changed), and how often the others read it.
const publishEvery = 2 * time.Second

// Bounds of what is published: a name longer than maxSharedName (a key
// may be 512 MB long) is left out of the published lists — an example, a
// listed violation, a big key; an unmatched prefix that long is counted
// under "(other prefixes)" — and a pass whose encoding still exceeds
// maxShared is not published (the others keep the previous one).
const (
	maxSharedName = 4 << 10
	maxShared     = 4 << 20
)

// shareKey names one database's shared state: the lease ("lease"), the
// latest pass ("pass") and the running pass's status ("status"), of the
// connection's name and its server (TargetID: consoles whose connections
// share a name but not a server share nothing).
func (s *Sweeper) shareKey(what string) string {
	return "keydeck:sweep:" + what + ":" + strconv.Itoa(s.db) + ":" + s.conn.Name + ":" + s.conn.TargetID()
}

// wirePass is the latest completed pass as published.
type wirePass struct {
	Passes int
	Sig    wireSig
	Acc    wireAcc
}

// wireSig is a signature as published (gob takes exported fields only).
type wireSig struct {
	OK                                          bool
	Dirty, LastSave, Expired, Evicted, Keys, Ex int64
}

func (g signature) wire() wireSig {
	return wireSig{g.ok, g.dirty, g.lastSave, g.expired, g.evicted, g.keys, g.expires}
}

func (w wireSig) sig() signature {
	return signature{ok: w.OK, dirty: w.Dirty, lastSave: w.LastSave, expired: w.Expired, evicted: w.Evicted, keys: w.Keys, expires: w.Ex}
}

// wireStatus is the running pass as published (small; written often).
type wireStatus struct {
	Holder    string
	Finished  time.Time // of the latest pass published (zero: none yet)
	Passes    int
	Seen      int64
	Err       string
	MemWhy    string
	Path      string
	Unchanged time.Time
	// Partial is the running first pass, while no pass has completed: the
	// others show its estimate as the holder does.
	Partial *wireAcc
}

// wireAcc is a dbAccumulator with its families named by ID.
type wireAcc struct {
	Seen, Memory, MemEst int64
	Whole, TTLOnly       int64
	Sample               int
	Cost                 time.Duration
	Fams                 []wireFam
	Violations           []Violation
	ViolCount            int64
	Unmatched            []PrefixGroup
	UnmCount, UnmSampled int64
	UnmSums              SampleSums
	ByMemory, ByElements []BigKey
	ByLength             []BigKey
	Started, Finished    time.Time
}

type wireFam struct {
	ID                      string
	Count, Sampled, TTLRead int64
	Sums                    SampleSums
}

func shortNames[T any](in []T, name func(T) string) []T {
	out := make([]T, 0, len(in))
	for _, v := range in {
		if len(name(v)) <= maxSharedName {
			out = append(out, v)
		}
	}
	return out
}

func toWire(a *dbAccumulator) wireAcc {
	w := wireAcc{Seen: a.seen, Memory: a.memory, MemEst: a.memEst, Whole: a.whole, TTLOnly: a.ttlOnly, Sample: a.sample, Cost: a.cost,
		ViolCount: a.violCount, UnmCount: a.unmCount, UnmSampled: a.unmSampled, UnmSums: a.unmSums, Started: a.started, Finished: a.finished,
		Violations: shortNames(a.violations, func(v Violation) string { return v.Key }),
		ByMemory:   shortNames(a.byMemory, func(b BigKey) string { return b.Key }),
		ByElements: shortNames(a.byElements, func(b BigKey) string { return b.Key }),
		ByLength:   shortNames(a.byLength, func(b BigKey) string { return b.Key })}
	for f, fs := range a.fams {
		w.Fams = append(w.Fams, wireFam{ID: f.ID, Count: fs.Count, Sampled: fs.Sampled, TTLRead: fs.TTLRead, Sums: fs.Sums})
	}
	var other *PrefixGroup
	for _, g := range a.unmatched {
		c := *g
		c.Examples = shortNames(g.Examples, func(n string) string { return n })
		if len(c.Prefix) > maxSharedName || c.Prefix == "(other prefixes)" {
			if other == nil {
				other = &PrefixGroup{Prefix: "(other prefixes)"}
			}
			other.Count += c.Count
			for _, e := range c.Examples {
				if len(other.Examples) < prefixExamples {
					other.Examples = append(other.Examples, e)
				}
			}
			continue
		}
		w.Unmatched = append(w.Unmatched, c)
	}
	if other != nil {
		w.Unmatched = append(w.Unmatched, *other)
	}
	return w
}

// fromWire rebuilds an accumulator with the families of pack; false when a
// family is not in it (this replica has not matched the pack yet).
func fromWire(w wireAcc, pack *schema.Pack) (*dbAccumulator, bool) {
	a := newAccumulator(w.Started, w.Sample)
	a.seen, a.memory, a.memEst, a.violCount, a.unmCount = w.Seen, w.Memory, w.MemEst, w.ViolCount, w.UnmCount
	a.whole, a.ttlOnly, a.cost, a.unmSampled, a.unmSums = w.Whole, w.TTLOnly, w.Cost, w.UnmSampled, w.UnmSums
	a.finished, a.violations, a.byMemory, a.byElements, a.byLength = w.Finished, w.Violations, w.ByMemory, w.ByElements, w.ByLength
	for _, wf := range w.Fams {
		var f *schema.Family
		if pack != nil {
			f = pack.Family(wf.ID)
		}
		if f == nil {
			return nil, false
		}
		a.fams[f] = &FamilyStats{Family: f, Count: wf.Count, Sampled: wf.Sampled, TTLRead: wf.TTLRead, Sums: wf.Sums}
	}
	for _, g := range w.Unmatched {
		a.unmatched[g.Prefix] = &g
	}
	return a, true
}

func encode(v any) ([]byte, bool) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(v); err != nil || b.Len() > maxShared {
		return nil, false
	}
	return b.Bytes(), true
}

func decode(b []byte, v any) bool { return gob.NewDecoder(bytes.NewReader(b)).Decode(v) == nil }

// publish writes the holder's state: the pass just completed (done), and
// the running pass's status at most every publishEvery. Both are kept
// recentFor, so that a replica opening the page later shows them: each
// status write keeps the pass it names as long (an unchanged database's
// holder writes only the status, for up to freshFor).
func (s *Sweeper) publish(ctx context.Context, done bool) {
	if s.share == nil || (!done && s.clock.Since(s.published) < publishEvery) {
		return
	}
	s.published = s.clock.Now()
	s.mu.Lock()
	st := wireStatus{Holder: s.share.ID, Passes: s.passes, Err: s.err, MemWhy: s.memWhy, Path: "pipelines", Unchanged: s.unchanged}
	if s.cur != nil {
		st.Seen = s.cur.seen
	}
	var pass []byte
	ok := true
	if s.last != nil {
		st.Finished = s.last.finished
		if done {
			pass, ok = encode(wirePass{Passes: s.passes, Sig: s.lastSig.wire(), Acc: toWire(s.last)})
		}
	} else if s.cur != nil && s.cur.seen > 0 {
		w := toWire(s.cur)
		st.Partial = &w
	}
	s.mu.Unlock()
	status, ok2 := encode(st)
	if !ok || !ok2 {
		s.log.Warn("a sweep's figures are too big to share with other replicas", "conn", s.conn.Name, "db", s.db)
		return
	}
	wctx, cancel := context.WithTimeout(ctx, publishEvery)
	defer cancel()
	_, err := s.share.Client.TxPipelined(wctx, func(p redis.Pipeliner) error {
		if pass != nil {
			p.Set(wctx, s.shareKey("pass"), pass, recentFor)
		} else {
			// The status names the latest pass: keep it as long.
			p.PExpire(wctx, s.shareKey("pass"), recentFor)
		}
		p.Set(wctx, s.shareKey("status"), status, recentFor)
		return nil
	})
	if err != nil && ctx.Err() == nil {
		s.log.Debug("sharing a sweep's figures failed", "conn", s.conn.Name, "db", s.db, "err", err)
	}
}

// passGone is a follower's state when the pass the holder's status names
// is no longer in the audit Redis (expired, or the audit Redis lost it).
const passGone = "the sweeping replica's latest pass is no longer published; its figures show again after its next pass"

// follow reads what the holder published: the status, and the pass when
// it is not the one shown. It sends nothing to the database's server.
func (s *Sweeper) follow(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, publishEvery)
	defer cancel()
	b, err := s.share.Client.Get(rctx, s.shareKey("status")).Bytes()
	var st wireStatus
	if err != nil || !decode(b, &st) {
		return
	}
	pack := s.conn.Pack()
	s.mu.Lock()
	have := s.last != nil && s.last.finished.Equal(st.Finished)
	s.mu.Unlock()
	var last *dbAccumulator
	var wp wirePass
	if !have && !st.Finished.IsZero() {
		b, err := s.share.Client.Get(rctx, s.shareKey("pass")).Bytes()
		if errors.Is(err, redis.Nil) {
			s.mu.Lock()
			s.err = passGone
			s.mu.Unlock()
			s.markRead()
			return
		}
		if err != nil || !decode(b, &wp) {
			return
		}
		var ok bool
		if last, ok = fromWire(wp.Acc, pack); !ok {
			return // the pack is not matched here yet: read again later
		}
	}
	cur := newAccumulator(s.clock.Now(), s.budget.Sample)
	cur.seen = st.Seen
	if st.Partial != nil {
		if p, ok := fromWire(*st.Partial, pack); ok {
			cur = p
		}
	}
	s.mu.Lock()
	if last != nil {
		s.last, s.lastSig, s.passes = last, wp.Sig.sig(), wp.Passes
	}
	s.cur, s.err, s.memWhy, s.unchanged = cur, st.Err, st.MemWhy, st.Unchanged
	shown := s.last != nil || st.Partial != nil || st.Err != ""
	s.mu.Unlock()
	if shown {
		s.markRead()
	}
}

// shared runs the sweeper as one of several replicas: it shows what is
// published at once, then sweeps while it holds the database's lease and
// follows the holder otherwise; it releases the lease when it stops.
func (s *Sweeper) shared(ctx context.Context) {
	l := s.share.New(s.shareKey("lease"))
	s.leased.Store(l)
	s.follow(ctx)
	l.Run(ctx, func(ctx context.Context) {
		s.sweep(ctx)
	}, s.follow)
	if !s.noRelease {
		l.Release()
	}
}
