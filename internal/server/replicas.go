package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/metrics"
	"github.com/keydeck/keydeck/redisview"
)

// Replicas (Config.Replicas) share, through leases in the audit Redis
// (internal/lease), the background work that runs whether or not anybody
// looks, so that two idle or equally watched replicas cost Redis what one
// does:
//   - each database's statistics sweep (stats.WithShare): one replica
//     sweeps, the others show what it publishes;
//   - each connection's watch, under probeKey: its holder
//     probes the connection every MonitorInterval and follows its keyspace
//     notifications, as a console on its own does; the others probe it
//     every followerProbe, read its notify-keyspace-events every
//     KeyspaceIdleRecheck, and subscribe to its notifications only while
//     one of their own pages watches a key of it;
//   - the metrics keeper (ban health, and with MetricsKeep the workers it
//     holds for /metrics), under metricsKey.
//
// The keys name the connections' servers (redisview.TargetID), so that two
// consoles logging to one audit Redis whose connections share a name but
// not a server (staging and prod) share nothing.
//
// What a viewer starts stays with the replica serving the viewer: live
// topics, the limit sweeps and quota walks of the pages, searches, the
// leaderboard index, a key's live view.

// probeKey is the lease of c's watch.
func probeKey(c *redisview.Conn) string { return "keydeck:probe:" + c.Name + ":" + c.TargetID() }

// metricsKey is the lease of the metrics keeper of a console with conns:
// of its connections' names and servers.
func metricsKey(conns []*redisview.Conn) string {
	ids := make([]string, 0, len(conns))
	for _, c := range conns {
		ids = append(ids, c.Name+"="+c.TargetID())
	}
	slices.Sort(ids)
	h := sha256.Sum256([]byte(strings.Join(ids, "\n")))
	return "keydeck:metrics:" + hex.EncodeToString(h[:8])
}

// followerProbe is how often a replica not holding a connection's watch
// probes it (its pages' own reads fail at once when the server does).
const followerProbe = 30 * time.Second

// monitor runs the connections' health probes until the console stops:
// all of them here, or with replicas each under its watch lease
// (watchShared, which follows the keyspace notifications too).
func (s *Server) monitor() {
	if s.share == nil {
		s.reg.Monitor(s.ctx, s.cfg.MonitorInterval)
		return
	}
	var wg sync.WaitGroup
	for _, c := range s.reg.All() {
		wg.Go(func() { s.watchShared(c) })
	}
	wg.Wait()
}

// watchShared probes c and follows its keyspace notifications at full
// rate while this replica holds c's watch lease, and otherwise probes it
// every followerProbe and subscribes only while a key of c is watched here.
func (s *Server) watchShared(c *redisview.Conn) {
	fast, slow := s.cfg.MonitorInterval, max(s.cfg.MonitorInterval, followerProbe)
	var holding atomic.Bool
	var mon, sub runner
	deliver := func(db int, key string) {
		for _, n := range s.watch.Names(c.Name, db, key) {
			s.hub.Kick(n)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		defer sub.stop()
		var release func()
		defer func() {
			if release != nil {
				release()
			}
		}()
		for {
			watching := s.watch.Watching(c.Name)
			switch {
			case watching && release == nil:
				release = c.WantKeyspace()
			case !watching && release != nil:
				release()
				release = nil
			}
			if holding.Load() || watching {
				sub.run(s.ctx, true, func(ctx context.Context) { c.WatchKeyspace(ctx, deliver) })
			} else {
				sub.stop()
				// The flags the pages show, read as seldom as an idle
				// watcher reads them while they are off.
				if s.cfg.Clock.Since(c.Keyspace().Checked) >= redisview.KeyspaceIdleRecheck {
					_, _, _ = c.KeyspaceFlags(s.ctx)
				}
			}
			if !clock.Sleep(s.ctx, s.cfg.Clock, time.Second) {
				return
			}
		}
	})
	l := s.share.New(probeKey(c))
	l.Run(s.ctx, func(ctx context.Context) {
		holding.Store(true)
		mon.run(ctx, fast, func(ctx context.Context) { c.Monitor(ctx, fast) })
		<-ctx.Done()
		holding.Store(false)
	}, func(context.Context) {
		mon.run(s.ctx, slow, func(ctx context.Context) { c.Monitor(ctx, slow) })
	})
	mon.stop()
	l.Release()
	wg.Wait()
}

// runKeeper runs the metrics keeper: here, or with replicas on the one
// holding its lease.
func (s *Server) runKeeper(k *metrics.Keeper) {
	if s.share == nil {
		k.Run(s.ctx)
		return
	}
	l := s.share.New(metricsKey(s.reg.All()))
	l.Run(s.ctx, k.Run, func(context.Context) {})
	l.Release()
}

// runner runs one goroutine at a time, started again when asked with
// another key (a monitor's interval) or after it ended. Used from one
// goroutine.
type runner struct {
	cancel context.CancelFunc
	done   chan struct{}
	key    any
}

func (r *runner) run(parent context.Context, key any, f func(context.Context)) {
	if r.cancel != nil && r.key == key {
		select {
		case <-r.done:
		default:
			return // running as asked
		}
	}
	r.stop()
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(ctx)
	}()
	r.cancel, r.done, r.key = cancel, done, key
}

func (r *runner) stop() {
	if r.cancel != nil {
		r.cancel()
		<-r.done
		r.cancel = nil
	}
}
