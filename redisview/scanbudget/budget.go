// Package scanbudget is one connection's scan budget: how many keys per
// second the scans people start (live searches, search requests, the user
// page's scans) may walk together, shared fairly between the identities
// that start them.
//
// Before each SCAN call a scan takes COUNT keys from the budget. The
// budget is a token bucket of rate keys/s (bursts of a quarter second), so
// every scan of a connection together walks at most rate keys a second,
// however many searches, tabs or sockets there are. When scans wait, the
// next grant goes to the identity that has been granted least (start-time
// fair queueing over identities): with N identities waiting each gets
// rate/N, and one identity's many searches share its one share, taking
// turns in arrival order. An identity's account is kept by name, not by
// socket or search, so closing every tab and opening them again neither
// resets what it was granted nor puts it ahead of the others; an identity
// that was idle joins at most a burst behind the current virtual time, so
// idling earns at most a burst of credit.
//
// When nothing waits any more, the virtual time moves up to the highest
// tag granted (the usual start-time fair queueing rule for an idle
// server): debts count only between identities that contend, so an
// identity that comes back while others still wait (a reconnect) keeps
// its debt, and once nobody waits every idle account is no further ahead
// than a fresh one and may be forgotten: the accounts kept stay bounded
// however many identities come and go.
package scanbudget

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
)

// burstTime is how much of a second's budget may be taken at once after
// the budget was idle.
const burstTime = time.Second / 4

// Budget is one connection's scan budget. A nil *Budget grants everything
// at once.
type Budget struct {
	rate  float64 // keys per second
	burst float64 // keys
	clock clock.Clock

	mu      sync.Mutex
	tokens  float64   // keys that may be granted now; negative after a grant bigger than the burst
	at      time.Time // when tokens was brought up to date
	vtime   float64   // virtual time: the start tag of the latest grant, or maxTag once nothing waits
	maxTag  float64   // the highest tag granted up to
	ids     map[string]*account
	pruneAt int // len(ids) at which the next prune runs
	waiting int
	seq     uint64
	timer   clock.Timer
}

// account is one identity's place in the fair queue.
type account struct {
	// tag is the virtual time up to which the identity has been granted
	// (keys); the waiting identity with the smallest tag goes next.
	tag     float64
	granted int64 // keys granted, ever
	queue   []*waiter
}

type waiter struct {
	keys    int64
	seq     uint64
	ready   chan struct{}
	granted bool
}

// New makes a budget of rate keys per second (rate > 0) on clock (nil:
// the wall clock). It starts full.
func New(rate float64, c clock.Clock) *Budget {
	if !(rate > 0) || math.IsInf(rate, 0) {
		panic("scanbudget: rate must be positive")
	}
	c = clock.Or(c)
	burst := max(1, rate*burstTime.Seconds())
	return &Budget{rate: rate, burst: burst, clock: c, tokens: burst, at: c.Now(), ids: map[string]*account{}}
}

// Rate is the budget in keys per second (0 for a nil budget: none).
func (b *Budget) Rate() float64 {
	if b == nil {
		return 0
	}
	return b.rate
}

// Take returns once keys more may be scanned by identity id, or with
// ctx's error when it ends first (then nothing is taken). Takes of one
// identity are granted in the order they were asked.
func (b *Budget) Take(ctx context.Context, id string, keys int64) error {
	if b == nil || keys <= 0 {
		return ctx.Err()
	}
	b.mu.Lock()
	w := b.enqueue(id, keys)
	b.dispatch()
	b.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if w.granted {
		return nil // granted just as ctx ended: the caller may use it
	}
	b.cancel(id, w)
	b.dispatch() // the head of the queue may have changed
	return ctx.Err()
}

// For is the budget as seen by one identity's scans.
func (b *Budget) For(id string) Tap { return Tap{b: b, id: id} }

// Tap is one identity's access to a budget.
type Tap struct {
	b  *Budget
	id string
}

// Take takes keys for the tap's identity (see Budget.Take).
func (t Tap) Take(ctx context.Context, keys int64) error { return t.b.Take(ctx, t.id, keys) }

// Stats is a snapshot of the budget.
type Stats struct {
	Rate float64 // keys per second
	// Waiting counts the takes waiting, per identity; Identities how many
	// identities have takes waiting.
	Waiting    map[string]int
	Identities int
	// Granted is the keys granted to each identity the budget remembers.
	Granted map[string]int64
}

// Stats says who waits and who was granted what.
func (b *Budget) Stats() Stats {
	if b == nil {
		return Stats{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s := Stats{Rate: b.rate, Waiting: map[string]int{}, Granted: map[string]int64{}}
	for id, a := range b.ids {
		if len(a.queue) > 0 {
			s.Waiting[id] = len(a.queue)
			s.Identities++
		}
		s.Granted[id] = a.granted
	}
	return s
}

// enqueue adds a take to id's queue. A new identity joins at the current
// virtual time; one that had nothing waiting keeps its own tag, but at
// most a burst behind the virtual time: a search between two steps of a
// live page (a moment with nothing waiting) keeps its place, while a long
// idle earns at most a burst.
func (b *Budget) enqueue(id string, keys int64) *waiter {
	a := b.ids[id]
	if a == nil {
		b.prune()
		a = &account{tag: b.vtime}
		b.ids[id] = a
	}
	if len(a.queue) == 0 {
		a.tag = max(a.tag, b.vtime-b.burst)
	}
	b.seq++
	w := &waiter{keys: keys, seq: b.seq, ready: make(chan struct{})}
	a.queue = append(a.queue, w)
	b.waiting++
	return w
}

func (b *Budget) cancel(id string, w *waiter) {
	a := b.ids[id]
	if a == nil {
		return
	}
	for i, x := range a.queue {
		if x == w {
			a.queue = append(a.queue[:i], a.queue[i+1:]...)
			b.waiting--
			return
		}
	}
}

// maxIdle bounds the accounts kept: beyond it, the idle ones that are not
// ahead of the virtual time (a fresh account would be the same) go.
const maxIdle = 256

// prune forgets idle accounts no further ahead than a fresh one. When
// most accounts must stay (they wait, or owe), the next prune waits until
// the map has doubled, so a new identity costs O(1) amortised.
func (b *Budget) prune() {
	if len(b.ids) < max(maxIdle, b.pruneAt) {
		return
	}
	for id, a := range b.ids {
		if len(a.queue) == 0 && a.tag <= b.vtime {
			delete(b.ids, id)
		}
	}
	b.pruneAt = 2 * len(b.ids)
}

// refill brings tokens up to now.
func (b *Budget) refill(now time.Time) {
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(b.burst, b.tokens+d.Seconds()*b.rate)
	}
	b.at = now
}

// next is the waiting identity to grant next: the smallest tag, then the
// earliest take.
func (b *Budget) next() *account {
	var best *account
	for _, a := range b.ids {
		if len(a.queue) == 0 {
			continue
		}
		if best == nil || a.tag < best.tag || a.tag == best.tag && a.queue[0].seq < best.queue[0].seq {
			best = a
		}
	}
	return best
}

// dispatch grants what the tokens allow, in fair order, and arms the
// timer for the next grant. Called with b.mu held.
func (b *Budget) dispatch() {
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	b.refill(b.clock.Now())
	for b.waiting > 0 {
		a := b.next()
		w := a.queue[0]
		// A take bigger than the burst waits for a full bucket, then
		// leaves it in debt: the rate still holds over time.
		need := min(float64(w.keys), b.burst)
		if b.tokens < need {
			wait := time.Duration(math.Ceil((need - b.tokens) / b.rate * float64(time.Second)))
			b.timer = b.clock.AfterFunc(wait, func() {
				b.mu.Lock()
				defer b.mu.Unlock()
				b.dispatch()
			})
			return
		}
		b.tokens -= float64(w.keys)
		b.vtime = max(b.vtime, a.tag) // a returning account may start a burst behind
		a.tag += float64(w.keys)
		b.maxTag = max(b.maxTag, a.tag)
		a.granted += w.keys
		a.queue = a.queue[1:]
		b.waiting--
		w.granted = true
		close(w.ready)
	}
	// Nothing waits: the contention is over, and so are the debts it
	// counted (see the package comment).
	b.vtime = max(b.vtime, b.maxTag)
}

// Pacer is one scan's place in the budget's queue, for a scan that runs
// in slices (a live search steps once per poll, each step waiting for the
// budget at most until its own deadline): a take whose ctx ends keeps its
// place, and the next Take waits on for it, so a search between two
// steps is not sent to the back of the queue (nor are the searches whose
// steps happen to start first favoured). Close gives the place up. A
// Pacer is for one scan: its Takes must not overlap.
type Pacer struct {
	b  *Budget
	id string
	w  *waiter // the take waiting, kept across Takes; nil: none
}

// Pacer is a new place in the queue for one scan of identity id.
func (b *Budget) Pacer(id string) *Pacer { return &Pacer{b: b, id: id} }

// Take returns once keys more may be scanned, or with ctx's error (the
// take then stays queued for the next Take, which is granted keys of the
// first, whatever it asks).
func (p *Pacer) Take(ctx context.Context, keys int64) error {
	if p == nil || p.b == nil || keys <= 0 {
		return ctx.Err()
	}
	b := p.b
	if p.w == nil {
		b.mu.Lock()
		p.w = b.enqueue(p.id, keys)
		b.dispatch()
		b.mu.Unlock()
	}
	select {
	case <-p.w.ready:
		p.w = nil
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close gives up the place in the queue (a take granted meanwhile is
// spent).
func (p *Pacer) Close() {
	if p == nil || p.b == nil || p.w == nil {
		return
	}
	b := p.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if !p.w.granted {
		b.cancel(p.id, p.w)
		b.dispatch()
	}
	p.w = nil
}
