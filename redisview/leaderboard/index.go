package leaderboard

import (
	"context"
	"sync"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/redisview"
)

const (
	// Rescan is how often an Index walks a connection's keys again.
	Rescan = 30 * time.Second
	// scanTimeout bounds one background scan.
	scanTimeout = 2 * time.Minute
)

// Index keeps each connection's leaderboard keys. Finding them is a SCAN
// over the family prefixes (Scan), which on a big database takes many round
// trips: it runs in the background at most every Rescan, at most
// DefaultListLimit keys, and callers summarise the keys already known.
// Scans run under the context given to NewIndex; cancel it, then Wait.
type Index struct {
	ctx    context.Context
	clock  clock.Clock // when a scan finished, when the next is due
	wg     sync.WaitGroup
	mu     sync.Mutex
	m      map[string]*indexed
	closed bool // Wait has begun: no scan may start
}

type indexed struct {
	refs      []Ref
	truncated bool
	err       error
	at        time.Time     // when the last scan finished
	done      chan struct{} // closed when the running scan ends; nil when none runs
}

// Option sets up an Index.
type Option func(*Index)

// WithClock times the index's rescans on c (the wall clock without).
func WithClock(c clock.Clock) Option { return func(x *Index) { x.clock = c } }

// NewIndex returns an empty index whose scans run under ctx (the server's).
func NewIndex(ctx context.Context, opts ...Option) *Index {
	x := &Index{ctx: ctx, m: map[string]*indexed{}}
	for _, o := range opts {
		o(x)
	}
	x.clock = clock.Or(x.clock)
	return x
}

// Refs returns the known leaderboard keys of c and whether there are more
// than DefaultListLimit, starting a rescan when they are stale. The first
// call for a connection waits up to wait for its first scan; until one
// ends, there are no keys. The error is the last scan's, unless an earlier
// one succeeded (its keys are kept).
func (x *Index) Refs(c *redisview.Conn, wait time.Duration) ([]Ref, bool, error) {
	x.mu.Lock()
	k := x.m[c.Name]
	if k == nil {
		k = &indexed{}
		x.m[c.Name] = k
	}
	if k.done == nil && x.clock.Since(k.at) > Rescan && !x.closed && x.ctx.Err() == nil {
		done := make(chan struct{})
		k.done = done
		x.wg.Go(func() {
			ctx, cancel := context.WithTimeout(x.ctx, scanTimeout)
			defer cancel()
			refs, truncated, err := Scan(ctx, c, DefaultListLimit)
			x.mu.Lock()
			if err == nil || k.at.IsZero() {
				k.refs, k.truncated, k.err = refs, truncated, err
			}
			k.at, k.done = x.clock.Now(), nil
			x.mu.Unlock()
			close(done)
		})
	}
	first, done := k.at.IsZero(), k.done
	x.mu.Unlock()
	if first && done != nil && wait > 0 {
		// Waited on the index's clock, like every worker's first read.
		t := x.clock.NewTimer(wait)
		select {
		case <-done:
		case <-t.C():
		}
		t.Stop()
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return k.refs, k.truncated, k.err
}

// Wait returns when no scan runs; none starts after. Cancel the context
// given to NewIndex first, or a running scan finishes first.
func (x *Index) Wait() {
	x.mu.Lock()
	x.closed = true
	x.mu.Unlock()
	x.wg.Wait()
}
