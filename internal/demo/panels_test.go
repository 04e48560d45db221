package demo_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/stats"
)

// On the embedded demo, Keydeck's overview and database pages get every
// figure a real server gives them: no tile and no memory column is left
// without one.
func TestDemoFillsEveryPanel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	d, err := demo.Start(ctx, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	conns := map[string]*redisview.Conn{}
	for _, dc := range d.Connections() {
		c, err := redisview.Open(redisview.ConnConfig{Name: dc.Name, URL: dc.URL}, log)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns[dc.Name] = c
	}

	r := stats.NewOverviewReader(conns["eisland"])
	// The hit ratio waits for the first lookups and the command rate for
	// the first clock ticks, as on a server just started; the deadline only
	// bounds a failure.
	var ov stats.Overview
	redistest.Eventually(t, 20*time.Second, "a hit ratio and a command rate", func() bool {
		ov = r.Read(ctx)
		if ov.Err != "" {
			t.Fatalf("overview: %s", ov.Err)
		}
		return ov.Server.HitRatio.OK && ov.Server.OpsPerSec.V > 0
	})
	s := ov.Server
	for name, o := range map[string]struct {
		ok  bool
		why string
	}{
		"version":       {s.Version.OK, s.Version.Why},
		"mode":          {s.Mode.OK, s.Mode.Why},
		"uptime":        {s.Uptime.OK, s.Uptime.Why},
		"memory used":   {s.UsedMemory.OK, s.UsedMemory.Why},
		"memory peak":   {s.PeakMemory.OK, s.PeakMemory.Why},
		"maxmemory":     {s.MaxMemory.OK, s.MaxMemory.Why},
		"ops/sec":       {s.OpsPerSec.OK, s.OpsPerSec.Why},
		"clients":       {s.Clients.OK, s.Clients.Why},
		"hit ratio":     {s.HitRatio.OK, s.HitRatio.Why},
		"evicted":       {s.Evicted.OK, s.Evicted.Why},
		"expired":       {s.Expired.OK, s.Expired.Why},
		"notifications": {s.Notifications.OK, s.Notifications.Why},
	} {
		if !o.ok {
			t.Errorf("overview %s: missing (%s)", name, o.why)
		}
	}
	if s.OpsEstimated {
		t.Error("ops/sec estimated by Keydeck: the demo's INFO has no instantaneous_ops_per_sec")
	}
	if s.UsedMemory.V <= 0 || s.PeakMemory.V < s.UsedMemory.V || s.Clients.V < 1 || s.OpsPerSec.V <= 0 {
		t.Errorf("implausible figures: used %d, peak %d, clients %d, ops %v",
			s.UsedMemory.V, s.PeakMemory.V, s.Clients.V, s.OpsPerSec.V)
	}
	if ov.KeyspaceSource != stats.SourceInfo || len(ov.DBs) != 15 {
		t.Fatalf("keyspace from %q: %d databases", ov.KeyspaceSource, len(ov.DBs))
	}
	for _, db := range ov.DBs {
		if db.Keys == 0 || !db.Expires.OK || db.Estimated {
			t.Errorf("db%d: %+v", db.Index, db)
		}
		if db.Expires.V > 0 && !db.AvgTTL.OK {
			t.Errorf("db%d: %d keys expire, average TTL missing (%s)", db.Index, db.Expires.V, db.AvgTTL.Why)
		}
	}

	// Database pages: memory per family and the biggest keys by memory.
	sweepCtx, cancel := context.WithCancel(ctx)
	pool := stats.NewSweepers(sweepCtx, stats.SweepBudget{KeysPerSec: 100000, Count: 500}, time.Minute, log)
	t.Cleanup(func() { cancel(); pool.Wait() })
	for _, page := range []struct {
		conn string
		pack string
		db   int
	}{{"eisland", "eisland", 14}, {"eisland", "eisland", 3}, {"gateway", "gateway", 0}, {"vertique", "vertique", 0}} {
		c := conns[page.conn]
		c.ForcePack(schema.BuiltinPack(page.pack))
		sw, release := pool.Acquire(c, page.db)
		var dd stats.DBDetail
		redistest.Eventually(t, 20*time.Second, fmt.Sprintf("%s db%d: a finished sweep", page.conn, page.db), func() bool {
			dd = sw.Detail(stats.TotalKeys(ctx, c, page.db))
			return dd.Pass >= 1
		})
		release()
		if dd.Pass < 1 {
			t.Errorf("%s db%d: no sweep finished (%s)", page.conn, page.db, dd.Err)
			continue
		}
		if dd.MemoryWhy != "" || dd.Memory <= 0 || len(dd.ByMemory) == 0 {
			t.Errorf("%s db%d: memory %d (%q), %d biggest keys", page.conn, page.db, dd.Memory, dd.MemoryWhy, len(dd.ByMemory))
		}
		if !dd.TotalKeys.OK {
			t.Errorf("%s db%d: total keys missing (%s)", page.conn, page.db, dd.TotalKeys.Why)
		}
		for _, f := range dd.Families {
			if f.Count > 0 && f.Memory <= 0 {
				t.Errorf("%s db%d: family %s has %d keys and no memory", page.conn, page.db, f.Family.ID, f.Count)
			}
		}
	}
}
