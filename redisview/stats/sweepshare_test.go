package stats_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/lease"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
)

// replica is one Keydeck process's sweepers: its own connection to the
// data server, and its own identity in the shared audit Redis.
type replica struct {
	id     string
	conn   *redisview.Conn
	pool   *stats.Sweepers
	s      *stats.Sweeper
	cancel context.CancelFunc
	done   sync.Once
}

// shareBudget sweeps the test's 3,000 keys in well under minPassInterval,
// so that between two passes the sweeper only waits.
var shareBudget = stats.SweepBudget{KeysPerSec: 20000, Count: 500}

func startReplica(t *testing.T, id string, data, audit *redistest.Server, opts ...stats.Option) *replica {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{id: id, conn: openConn(t, data.URL(0)), cancel: cancel}
	sh := &lease.Shared{Client: audit.Client(0), ID: id}
	r.pool = stats.NewSweepers(ctx, shareBudget, time.Minute, quiet(), append([]stats.Option{stats.WithShare(sh)}, opts...)...)
	var release func()
	r.s, release = r.pool.Acquire(r.conn, 0)
	t.Cleanup(func() { release(); r.stop() })
	return r
}

// stop ends the replica's sweeps (a clean stop releases the lease; a
// replica made WithoutRelease leaves it to expire, as a dead one would).
func (r *replica) stop() { r.done.Do(func() { r.cancel(); r.pool.Wait() }) }

func (r *replica) detail() stats.DBDetail { return r.s.Detail(redisview.None[int64]("")) }

// fillShare writes n string keys to db 0 and starts a writer on db 1 that
// changes the server every 100 ms (SET only, which no sweep sends), so
// that every sweep pass runs again instead of finding nothing changed.
func fillShare(t *testing.T, data *redistest.Server, n int) {
	t.Helper()
	ctx := context.Background()
	c := data.Client(0)
	p := c.Pipeline()
	for i := range n {
		p.Set(ctx, fmt.Sprintf("share:%05d", i), "v", 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	t.Cleanup(func() { stop(); wg.Wait() })
	w := data.Client(1)
	wg.Go(func() {
		for wctx.Err() == nil {
			w.Set(wctx, "writer", time.Now().String(), 0)
			select {
			case <-wctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
}

// sweepCommands counts the commands the data server ran but the writer's
// SETs.
func sweepCommands(t *testing.T, data *redistest.Server) int64 {
	t.Helper()
	calls, err := data.CommandCalls(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for cmd, c := range calls {
		if cmd != "set" {
			n += c
		}
	}
	return n
}

// perPasses counts the data server's commands over the next k passes of
// r, from the completion of one to the completion of the k-th after it
// (between two passes a sweeper only waits, so the counts are whole
// passes).
func perPasses(t *testing.T, data *redistest.Server, r *replica, k int) int64 {
	t.Helper()
	p0 := r.detail().Pass
	redistest.Eventually(t, 30*time.Second, r.id+"'s next pass", func() bool { return r.detail().Pass > p0 })
	p0 = r.detail().Pass
	c0 := sweepCommands(t, data)
	redistest.Eventually(t, 60*time.Second, fmt.Sprintf("%d passes of %s", k, r.id), func() bool { return r.detail().Pass >= p0+k })
	return sweepCommands(t, data) - c0
}

// holder is the holder of r's database's sweep lease (every replica of a
// test watches the same one).
func holder(t *testing.T, audit *redistest.Server, r *replica) string {
	t.Helper()
	v, err := audit.Client(0).Get(context.Background(), stats.ShareKey(r.s, "lease")).Result()
	if err != nil && err != redis.Nil {
		t.Fatal(err)
	}
	return lease.HolderID(v)
}

func sameFigures(a, b stats.DBDetail) bool {
	if a.CompletedAt.IsZero() || !a.CompletedAt.Equal(b.CompletedAt) || a.Pass != b.Pass || a.UnmCount != b.UnmCount ||
		a.Memory != b.Memory || len(a.Unmatched) != len(b.Unmatched) || len(a.ByMemory) != len(b.ByMemory) {
		return false
	}
	for i := range a.Unmatched {
		if a.Unmatched[i].Prefix != b.Unmatched[i].Prefix || a.Unmatched[i].Count != b.Unmatched[i].Count {
			return false
		}
	}
	for i := range a.ByMemory {
		if a.ByMemory[i] != b.ByMemory[i] {
			return false
		}
	}
	return true
}

// Two replicas watching one database sweep it once: with the second
// running the data server runs no more commands per pass than with the
// first alone (≤ 1.1×), the second shows the first's figures, and when
// the first dies (its lease left to expire) the second takes the lease
// within 10 s and its figures keep coming.
func TestSharedSweepRunsOnceAcrossReplicas(t *testing.T) {
	data, audit := redistest.Start(t), redistest.Start(t)
	fillShare(t, data, 3000)
	const k = 3

	a := startReplica(t, "replica-a", data, audit, stats.WithoutRelease())
	redistest.Eventually(t, 30*time.Second, "replica-a's first pass", func() bool { return a.detail().Pass >= 1 })
	one := perPasses(t, data, a, k)

	b := startReplica(t, "replica-b", data, audit)
	// A replica that joins shows the published pass at once: by its first
	// read, a completed pass of every key (its own would be a partial
	// first batch).
	b.s.WaitRead(context.Background(), 10*time.Second)
	if d := b.detail(); d.Pass < 1 || d.CompletedAt.IsZero() || d.UnmCount != 3000 {
		t.Fatalf("replica-b's first figures: pass %d completed %v, %d keys; want replica-a's pass of 3000", d.Pass, d.CompletedAt, d.UnmCount)
	}
	redistest.Eventually(t, 10*time.Second, "replica-b showing replica-a's pass", func() bool { return sameFigures(a.detail(), b.detail()) })
	two := perPasses(t, data, a, k)
	t.Logf("data server commands over %d passes: replica-a alone %d, both replicas %d (%.3f×)", k, one, two, float64(two)/float64(one))
	if float64(two) > 1.1*float64(one) {
		t.Fatalf("two replicas cost %d commands over %d passes, one %d: more than 1.1×", two, k, one)
	}
	if h := holder(t, audit, a); h != "replica-a" {
		t.Fatalf("lease held by %q, want replica-a", h)
	}
	redistest.Eventually(t, 10*time.Second, "replica-b showing replica-a's latest pass", func() bool { return sameFigures(a.detail(), b.detail()) })

	a.stop() // dies: no release
	killed := time.Now()
	last := b.detail().Pass
	redistest.Eventually(t, 10*time.Second, "replica-b taking the lease of the dead replica-a", func() bool { return holder(t, audit, a) == "replica-b" })
	t.Logf("replica-b took the lease %v after replica-a died", time.Since(killed).Round(100*time.Millisecond))
	redistest.Eventually(t, 30*time.Second, "replica-b's own passes", func() bool { return b.detail().Pass >= last+2 })
	if d := b.detail(); d.UnmCount != 3000 || d.Err != "" {
		t.Fatalf("replica-b after takeover: %d keys, err %q", d.UnmCount, d.Err)
	}
}

// The audit Redis restarting empty mid-lease (the lease and the published
// figures gone) leaves one replica sweeping: passes keep coming, and
// once a holder is settled the data server runs no more commands per pass
// than one sweeper costs (≤ 1.1×) — nobody sweeps twice for good, nobody
// stops for good.
//
// Either replica may hold the lease after the restart (race: the one that
// did not hold it before takes it first).
func TestSharedSweepSurvivesAuditRestart(t *testing.T) {
	for _, race := range []bool{false, true} {
		t.Run(fmt.Sprintf("race=%v", race), func(t *testing.T) {
			t.Parallel()
			sharedSweepSurvivesAuditRestart(t, race)
		})
	}
}

func sharedSweepSurvivesAuditRestart(t *testing.T, race bool) {
	data, audit := redistest.Start(t), redistest.Start(t)
	fillShare(t, data, 3000)
	const k = 3

	a := startReplica(t, "replica-a", data, audit)
	redistest.Eventually(t, 30*time.Second, "replica-a's first pass", func() bool { return a.detail().Pass >= 1 })
	b := startReplica(t, "replica-b", data, audit)
	redistest.Eventually(t, 10*time.Second, "replica-b showing replica-a's pass", func() bool { return sameFigures(a.detail(), b.detail()) })
	one := perPasses(t, data, a, k)

	audit.Restart()
	if race {
		// replica-b's SET NX came before replica-a's renewal found the
		// lease gone: replica-a must stop sweeping.
		if err := audit.Client(0).Set(context.Background(), stats.ShareKey(b.s, "lease"), stats.LeaseToken(b.s), lease.TTL).Err(); err != nil {
			t.Fatal(err)
		}
	}
	byID := map[string]*replica{a.id: a, b.id: b}
	var h *replica
	redistest.Eventually(t, 10*time.Second, "a lease holder after the audit Redis restarted", func() bool {
		h = byID[holder(t, audit, a)]
		return h != nil
	})
	if race && h != b {
		t.Fatalf("lease held by %s after replica-b took it", h.id)
	}
	// Let a replica that lost the lease notice it (its next renewal).
	p0 := h.detail().Pass
	redistest.Eventually(t, 30*time.Second, "two passes of the holder", func() bool { return h.detail().Pass >= p0+2 })
	if byID[holder(t, audit, a)] != h {
		t.Fatalf("the lease moved from %s to %q", h.id, holder(t, audit, a))
	}
	after := perPasses(t, data, h, k)
	t.Logf("data server commands over %d passes: before the audit restart %d, after (holder %s) %d (%.3f×)", k, one, h.id, after, float64(after)/float64(one))
	if float64(after) > 1.1*float64(one) {
		t.Fatalf("after the audit Redis restarted, %d commands over %d passes against %d before: more than one sweep", after, k, one)
	}
	other := a
	if h == a {
		other = b
	}
	redistest.Eventually(t, 10*time.Second, other.id+" showing the holder's pass again", func() bool { return sameFigures(h.detail(), other.detail()) })
}

// An audit Redis that stays down leaves nobody able to hold a lease: the
// replicas sweep on their own meanwhile (figures keep coming), and once it
// is back, one of them holds the lease again and the other shows its
// figures.
func TestSharedSweepFailsOpenWhileTheAuditRedisIsDown(t *testing.T) {
	data, audit := redistest.Start(t), redistest.Start(t)
	fillShare(t, data, 3000)
	a := startReplica(t, "replica-a", data, audit)
	redistest.Eventually(t, 30*time.Second, "replica-a's first pass", func() bool { return a.detail().Pass >= 1 })
	b := startReplica(t, "replica-b", data, audit)
	redistest.Eventually(t, 10*time.Second, "replica-b showing replica-a's pass", func() bool { return sameFigures(a.detail(), b.detail()) })

	audit.Stop()
	pa, pb := a.detail().Pass, b.detail().Pass
	redistest.Eventually(t, 30*time.Second, "both replicas' own passes while the audit Redis is down", func() bool {
		return a.detail().Pass >= pa+2 && b.detail().Pass >= pb+2
	})

	audit.Restart()
	byID := map[string]*replica{a.id: a, b.id: b}
	var h *replica
	redistest.Eventually(t, 20*time.Second, "a lease holder once the audit Redis is back", func() bool {
		h = byID[holder(t, audit, a)]
		return h != nil
	})
	other := a
	if h == a {
		other = b
	}
	redistest.Eventually(t, 20*time.Second, other.id+" showing the holder's pass", func() bool { return sameFigures(h.detail(), other.detail()) })
}

// A name is published byte-exact (invalid UTF-8, HTML, spaces kept), and
// one longer than the published bound is left out of the follower's lists
// but still counted.
func TestSharedFiguresCarryNamesByteExact(t *testing.T) {
	data, audit := redistest.Start(t), redistest.Start(t)
	ctx := context.Background()
	odd := "odd:\xff\xfe<b>x</b>: padded "
	long := "long:" + strings.Repeat("x", 5000)
	c := data.Client(0)
	c.Set(ctx, odd, strings.Repeat("v", 5000), 0) // the biggest by memory
	c.Set(ctx, long, "v", 0)
	a := startReplica(t, "replica-a", data, audit)
	redistest.Eventually(t, 30*time.Second, "replica-a's first pass", func() bool { return a.detail().Pass >= 1 })
	b := startReplica(t, "replica-b", data, audit)
	redistest.Eventually(t, 10*time.Second, "replica-b showing replica-a's pass", func() bool {
		return !b.detail().CompletedAt.IsZero() && b.detail().CompletedAt.Equal(a.detail().CompletedAt)
	})
	names := func(d stats.DBDetail) map[string]bool {
		out := map[string]bool{}
		for _, k := range d.ByMemory {
			out[k.Key] = true
		}
		for _, g := range d.Unmatched {
			for _, e := range g.Examples {
				out[e] = true
			}
		}
		return out
	}
	da, db := a.detail(), b.detail()
	if !names(da)[odd] || !names(da)[long] {
		t.Fatalf("the holder lists %v", names(da))
	}
	if db.UnmCount != 2 || !names(db)[odd] || db.ByMemory[0].Key != odd {
		t.Fatalf("the follower: %d keys, lists %v", db.UnmCount, names(db))
	}
	if names(db)[long] {
		t.Fatal("a 5,005-byte name was published")
	}
}

// The holder of an unchanged database skips passes (freshFor) and writes
// only the status, which names its latest pass: each status write keeps
// that pass published as long as the status (a follower opening the
// database later than recentFor after the pass still shows it), and a
// follower that finds the named pass gone says so instead of showing an
// empty frame.
func TestSharedPassOutlivesAnUnchangedDatabase(t *testing.T) {
	data, audit := redistest.Start(t), redistest.Start(t)
	ctx := context.Background()
	c := data.Client(0)
	for i := range 100 {
		c.Set(ctx, fmt.Sprintf("still:%03d", i), "v", 0)
	}
	a := startReplica(t, "replica-a", data, audit)
	redistest.Eventually(t, 30*time.Second, "replica-a's first pass", func() bool { return a.detail().Pass >= 1 })
	ac := audit.Client(0)
	pass := stats.ShareKey(a.s, "pass")
	redistest.Eventually(t, 10*time.Second, "the published pass", func() bool { return ac.Exists(ctx, pass).Val() == 1 })
	// As if the pass were published 9 min 45 s ago (recentFor is 10 min);
	// the status is written every 2-4 s.
	ac.PExpire(ctx, pass, 15*time.Second)
	redistest.Eventually(t, 12*time.Second, "the pass's TTL renewed with the status", func() bool {
		return ac.PTTL(ctx, pass).Val() > time.Minute
	})
	if p := a.detail().Pass; p != 1 {
		t.Fatalf("replica-a swept an unchanged database again (pass %d): the test shows nothing", p)
	}

	ac.Del(ctx, pass)
	b := startReplica(t, "replica-b", data, audit)
	b.s.WaitRead(ctx, 10*time.Second)
	redistest.Eventually(t, 10*time.Second, "replica-b saying the holder's pass is gone", func() bool {
		return strings.Contains(b.detail().Err, "no longer published")
	})
}

// Two consoles logging to one audit Redis whose connections share a name
// ("t") but not a server (staging and prod) share nothing: each sweeps
// its own server and shows its own figures.
func TestSharedSweepKeepsToItsOwnServer(t *testing.T) {
	audit := redistest.Start(t)
	staging, prod := redistest.Start(t), redistest.Start(t)
	ctx := context.Background()
	for n, data := range map[int]*redistest.Server{100: staging, 200: prod} {
		p := data.Client(0).Pipeline()
		for i := range n {
			p.Set(ctx, fmt.Sprintf("own:%03d", i), "v", 0)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	a := startReplica(t, "replica-a", staging, audit)
	redistest.Eventually(t, 30*time.Second, "replica-a's first pass", func() bool { return a.detail().Pass >= 1 })
	b := startReplica(t, "replica-b", prod, audit)
	if stats.ShareKey(a.s, "lease") == stats.ShareKey(b.s, "lease") {
		t.Fatalf("staging's and prod's sweeps share the lease %q", stats.ShareKey(a.s, "lease"))
	}
	redistest.Eventually(t, 30*time.Second, "replica-b's own pass of prod", func() bool {
		d := b.detail()
		return d.Pass >= 1 && d.UnmCount == 200
	})
	if d := a.detail(); d.UnmCount != 100 {
		t.Fatalf("replica-a (staging) shows %d keys, want its own 100", d.UnmCount)
	}
	if v := lease.HolderID(audit.Client(0).Get(ctx, stats.ShareKey(b.s, "lease")).Val()); v != b.id {
		t.Fatalf("prod's sweep lease held by %q, want replica-b", v)
	}
}
