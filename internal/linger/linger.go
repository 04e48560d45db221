// Package linger keeps one worker per key running while anyone uses it,
// and for a while after the last user leaves, so that flipping between
// pages does not restart it: the limits sweeps, the statistics sweepers
// and the quota walkers are such workers.
package linger

import (
	"context"
	"sync"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
)

// Hooks make and run a pool's workers.
type Hooks[K comparable, V any] struct {
	// Run runs the worker until ctx ends (its linger ran out, or the
	// pool's context ended), in its own goroutine.
	Run func(ctx context.Context, k K, v V)
	// Stopped, if set, is told under the pool's lock that the worker's
	// linger ran out, before its context is cancelled.
	Stopped func(k K, v V)
}

// Pool runs at most one worker per key.
type Pool[K comparable, V any] struct {
	ctx    context.Context
	linger time.Duration
	clock  clock.Clock
	hooks  Hooks[K, V]

	mu sync.Mutex
	m  map[K]*entry[V]
	wg sync.WaitGroup
}

type entry[V any] struct {
	v      V
	refs   int
	cancel context.CancelFunc
	idle   clock.Timer
}

// New makes a pool whose workers run until ctx ends at the latest, each
// linger after its last release; clk nil is the wall clock.
func New[K comparable, V any](ctx context.Context, linger time.Duration, clk clock.Clock, h Hooks[K, V]) *Pool[K, V] {
	return &Pool[K, V]{ctx: ctx, linger: linger, clock: clock.Or(clk), hooks: h, m: map[K]*entry[V]{}}
}

// Acquire returns k's worker, made with start (under the pool's lock) and
// run if it is not running. Call release (idempotent) when done with it.
func (p *Pool[K, V]) Acquire(k K, start func() V) (v V, release func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.m[k]
	if e == nil {
		ctx, cancel := context.WithCancel(p.ctx)
		e = &entry[V]{v: start(), cancel: cancel}
		p.m[k] = e
		p.wg.Add(1)
		go func() { defer p.wg.Done(); p.hooks.Run(ctx, k, e.v) }()
	}
	if e.idle != nil {
		e.idle.Stop()
		e.idle = nil
	}
	e.refs++
	var once sync.Once
	return e.v, func() { once.Do(func() { p.release(k, e) }) }
}

func (p *Pool[K, V]) release(k K, e *entry[V]) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e.refs--
	if e.refs > 0 {
		return
	}
	e.idle = p.clock.AfterFunc(p.linger, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if e.refs == 0 && p.m[k] == e {
			if p.hooks.Stopped != nil {
				p.hooks.Stopped(k, e.v)
			}
			e.cancel()
			delete(p.m, k)
		}
	})
}

// Get returns k's worker if it is running, without acquiring it.
func (p *Pool[K, V]) Get(k K) (V, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.m[k]
	if !ok {
		var zero V
		return zero, false
	}
	return e.v, true
}

// Running is the number of workers running now (lingering ones count).
func (p *Pool[K, V]) Running() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m)
}

// Wait blocks until every worker has returned (after the pool's context
// ended).
func (p *Pool[K, V]) Wait() { p.wg.Wait() }
