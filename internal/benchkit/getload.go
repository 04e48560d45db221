package benchkit

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Latencies are the round trips an application's GETs took while
// something else ran on the same server.
type Latencies struct {
	N                   int
	Errors              int
	P50, P99, P999, Max time.Duration
}

func (l Latencies) String() string {
	return fmt.Sprintf("%d GETs (%d errors): p50 %s, p99 %s, p99.9 %s, max %s",
		l.N, l.Errors, l.P50.Round(time.Microsecond), l.P99.Round(time.Microsecond),
		l.P999.Round(time.Microsecond), l.Max.Round(time.Microsecond))
}

// GetLoad is an application's read traffic: GETs of key(i) at rate per
// second from workers connections, each timed, until Stop. It stands for
// the application a bulk action must not disturb.
type GetLoad struct {
	stop chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	lat  []time.Duration
	errs int
}

// StartGetLoad starts the traffic against the server at addr, database db.
func StartGetLoad(addr string, db, workers int, rate float64, key func(i int) string) *GetLoad {
	g := &GetLoad{stop: make(chan struct{})}
	every := time.Duration(float64(time.Second) * float64(workers) / rate)
	for w := range workers {
		c := redis.NewClient(&redis.Options{Addr: addr, DB: db, PoolSize: 1, MaxRetries: -1})
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			defer c.Close()
			g.run(c, w, workers, every, key)
		}()
	}
	return g
}

func (g *GetLoad) run(c *redis.Client, w, workers int, every time.Duration, key func(int) string) {
	ctx := context.Background()
	tick := time.NewTicker(every)
	defer tick.Stop()
	var lat []time.Duration
	errs := 0
	for i := w; ; i += workers {
		select {
		case <-g.stop:
			g.mu.Lock()
			g.lat, g.errs = append(g.lat, lat...), g.errs+errs
			g.mu.Unlock()
			return
		case <-tick.C:
		}
		t := time.Now()
		err := c.Get(ctx, key(i)).Err()
		lat = append(lat, time.Since(t))
		if err != nil && err != redis.Nil {
			errs++
		}
	}
}

// Stop ends the traffic and says how long its GETs took.
func (g *GetLoad) Stop() Latencies {
	close(g.stop)
	g.wg.Wait()
	l := Latencies{N: len(g.lat), Errors: g.errs}
	if l.N == 0 {
		return l
	}
	slices.Sort(g.lat)
	at := func(q float64) time.Duration { return g.lat[min(l.N-1, int(q*float64(l.N)))] }
	l.P50, l.P99, l.P999, l.Max = at(0.50), at(0.99), at(0.999), g.lat[l.N-1]
	return l
}
