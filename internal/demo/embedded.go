package demo

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Conn names one demo server the console should connect to.
type Conn struct{ Name, URL string }

// Demo is three in-process Redis servers holding the seed systems' data,
// with a simulator writing live traffic into them.
type Demo struct {
	hosts   []*host // one per server: a miniredis and what it does not answer
	names   []string
	clients []*redis.Client
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	once    sync.Once
}

// eIsland uses databases 0–14 of one server.
const eislandDatabases = 15

// simulatorEvery is the pace of live traffic: fast enough that a watched
// leaderboard moves, slow enough that the demo stays light.
const simulatorEvery = 400 * time.Millisecond

// Start runs the demo servers on random loopback ports, seeds them and
// starts the simulator and the expiry clock. ctx bounds the seeding and the
// background work; Close stops everything, servers included.
func Start(ctx context.Context, log *slog.Logger) (*Demo, error) {
	d := &Demo{names: []string{"eisland", "gateway", "vertique"}}
	now := time.Now()
	for range d.names {
		h, err := runHost(now)
		if err != nil {
			d.Close()
			return nil, err
		}
		d.hosts = append(d.hosts, h)
	}

	eisland := make([]redis.Cmdable, eislandDatabases)
	for db := range eisland {
		eisland[db] = d.client(d.hosts[0].addr(), db)
	}
	eislandDB := func(db int) redis.Cmdable { return eisland[db] }
	gateway := d.client(d.hosts[1].addr(), 0)
	vertique := d.client(d.hosts[2].addr(), 0)

	err := errors.Join(
		SeedEIsland(ctx, eislandDB, now),
		SeedGateway(ctx, gateway, now),
		SeedVertique(ctx, vertique, now, DemoSecret),
	)
	if err != nil {
		d.Close()
		return nil, err
	}

	for _, h := range d.hosts {
		h.measureMemory()
	}

	runCtx, cancel := context.WithCancel(ctx)
	d.cancel = cancel
	d.wg.Go(func() { d.runClock(runCtx, now) })
	sim := NewSimulator(eislandDB, gateway, vertique, rand.New(rand.NewPCG(uint64(now.UnixNano()), 0x5EED)), time.Now)
	d.wg.Go(func() { sim.Run(runCtx, simulatorEvery) })

	for _, c := range d.Connections() {
		log.Info("demo redis started", "name", c.Name, "url", c.URL)
	}
	return d, nil
}

// runClock makes keys expire. miniredis never expires keys by itself: TTLs
// only shrink through FastForward, so the clock feeds it the wall-clock time
// that really passed, every clockTick.
//
// It also sets the server's time to the tick (SetTime): miniredis answers
// PEXPIRETIME as its time plus the TTL left, so with time.Now() the
// absolute expiry of an untouched key would drift by up to a tick between
// two reads, and Keydeck, which fingerprints it, would take every key with
// a TTL for changed. With the time set at the tick it reads the same until
// someone changes the TTL; TIME and relative EXPIREs run at most a tick
// behind. (ClockTTL would be exact, but it walks every key of every
// database on each command, which made seeding alone take seconds.)
//
// Each tick also counts the keys that expired and samples the command rate
// (see host.tick), and every memoryEvery the servers re-measure their data.
func (d *Demo) runClock(ctx context.Context, last time.Time) {
	last = last.Round(0)
	for _, h := range d.hosts {
		h.setTime(last)
	}
	t := time.NewTicker(clockTick)
	defer t.Stop()
	measured := last
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			// Wall-clock readings only: TTLs shrink by the same amount the
			// server's time grows, so PEXPIRETIME (their sum) stays exact;
			// a monotonic difference drifts from the wall clock's by a few
			// microseconds a tick, and a key's expiry read a millisecond off
			// is taken for changed.
			now = now.Round(0)
			for _, h := range d.hosts {
				h.tick(now, now.Sub(last))
			}
			last = now
			if now.Sub(measured) >= memoryEvery {
				for _, h := range d.hosts {
					h.measureMemory()
				}
				measured = now
			}
		}
	}
}

// clockTick bounds how far the demo's clock lags behind the wall clock.
const clockTick = 100 * time.Millisecond

func (d *Demo) client(addr string, db int) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, DB: db,
		// Redis 7.0, which the demo answers as, has no CLIENT SETINFO:
		// skip the identity handshake rather than send a command that is
		// bound to fail.
		DisableIdentity: true})
	d.clients = append(d.clients, c)
	return c
}

// Connections lists the demo servers: "eisland", "gateway", "vertique".
func (d *Demo) Connections() []Conn {
	out := make([]Conn, len(d.hosts))
	for i, h := range d.hosts {
		out[i] = Conn{Name: d.names[i], URL: "redis://" + h.addr()}
	}
	return out
}

// Close stops the simulator, then the servers. It is safe to call twice.
func (d *Demo) Close() {
	d.once.Do(func() {
		if d.cancel != nil {
			d.cancel()
		}
		d.wg.Wait()
		for _, c := range d.clients {
			_ = c.Close()
		}
		for _, h := range d.hosts {
			h.close()
		}
	})
}
